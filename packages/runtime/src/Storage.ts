/**
 * Picks the storage adapter the configuration names.
 *
 * @since 0.1.0
 */
import type { FileDataError, FileRepository, OperatorStore } from "@filedata/core"
import { SqliteStorage } from "@filedata/sqlite"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { loadedLayer } from "./internal/loadedLayer.js"
import * as ServiceConfig from "./ServiceConfig.js"

const adapter = ({ database, pool }: ServiceConfig.StorageOptions) => {
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

/**
 * The repository and the operator store of the configured database: SQLite for `file:` URLs, PostgreSQL for
 * `postgres://` ones.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: ServiceConfig.StorageOptions
): Layer.Layer<FileRepository.FileRepository | OperatorStore.OperatorStore, FileDataError.StorageUnavailable> =>
  adapter(options)

/**
 * {@link layer} on the `DATABASE_*` variables.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<
  FileRepository.FileRepository | OperatorStore.OperatorStore,
  FileDataError.StorageUnavailable | ConfigError.ConfigError
> = Layer.unwrapEffect(Effect.map(ServiceConfig.storage, layer))
