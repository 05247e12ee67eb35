/**
 * Picks the storage adapter the configuration names.
 *
 * @since 0.1.0
 */
import type { FileRepository, OperatorStore } from "@filedata/core"
import { FileDataError } from "@filedata/core"
import { SqliteStorage } from "@filedata/sqlite"
import * as Layer from "effect/Layer"
import type { DatabaseLocation } from "./FiledataConfig.js"

/**
 * The repository and the operator store for a database location.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  location: DatabaseLocation
): Layer.Layer<FileRepository.FileRepository | OperatorStore.OperatorStore, FileDataError.StorageUnavailable> => {
  switch (location._tag) {
    case "Sqlite":
      return SqliteStorage.layer({ filename: location.filename })
    case "Postgres":
      return Layer.fail(
        new FileDataError.StorageUnavailable({ cause: new Error("PostgreSQL storage is not available in this build") })
      )
  }
}
