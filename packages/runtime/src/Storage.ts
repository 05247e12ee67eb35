/**
 * Picks the storage adapter the configuration names.
 *
 * @since 0.1.0
 */
import type { FileDataError, FileRepository, OperatorStore } from "@filedata/core"
import { SqliteStorage } from "@filedata/sqlite"
import type * as Layer from "effect/Layer"
import { loadedLayer } from "./internal/loadedLayer.js"
import type { DatabaseLocation, ServiceConfig } from "./ServiceConfig.js"

/**
 * The repository and the operator store of the configured database: SQLite for `file:` URLs, PostgreSQL,
 * with the given pool (the adapter's defaults without one), for `postgres://` ones.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  database: DatabaseLocation,
  pool?: ServiceConfig["databasePool"]
): Layer.Layer<FileRepository.FileRepository | OperatorStore.OperatorStore, FileDataError.StorageUnavailable> => {
  switch (database._tag) {
    case "Sqlite":
      return SqliteStorage.layer({ filename: database.filename })
    case "Postgres":
      return loadedLayer(
        () => import("@filedata/postgres"),
        ({ PgStorage }) =>
          PgStorage.layer({
            url: database.url,
            poolMax: pool?.max,
            statementTimeoutMillis: pool?.statementTimeoutMillis
          })
      )
  }
}
