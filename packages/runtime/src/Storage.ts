/**
 * Picks the storage adapter the configuration names.
 *
 * @since 0.1.0
 */
import type { FileDataError, FileRepository, OperatorStore } from "@filedata/core"
import { SqliteStorage } from "@filedata/sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { DatabaseLocation, FiledataConfig } from "./FiledataConfig.js"

/**
 * The repository and the operator store of the configured database: SQLite for `file:` URLs, PostgreSQL,
 * with the given pool (the adapter's defaults without one), for `postgres://` ones.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  database: DatabaseLocation,
  pool?: FiledataConfig["databasePool"]
): Layer.Layer<FileRepository.FileRepository | OperatorStore.OperatorStore, FileDataError.StorageUnavailable> => {
  switch (database._tag) {
    case "Sqlite":
      return SqliteStorage.layer({ filename: database.filename })
    case "Postgres":
      // Loaded only when configured, like the Redis limiter: the PostgreSQL client slows every start otherwise.
      return Layer.unwrapEffect(
        Effect.map(
          Effect.promise(() => import("@filedata/postgres")),
          ({ PgStorage }) =>
            PgStorage.layer({
              url: database.url,
              poolMax: pool?.max,
              statementTimeoutMillis: pool?.statementTimeoutMillis
            })
        )
      )
  }
}
