/**
 * Picks the storage adapter the configuration names.
 *
 * @since 0.1.0
 */
import type { SqlStorage } from "@filedata/sql"
import { SqliteStorage } from "@filedata/sqlite"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { loadedLayer } from "./internal/loadedLayer.js"
import * as ServiceConfig from "./ServiceConfig.js"
import { DependencyUnavailable } from "./StartupFailure.js"

const adapter = ({ database, pool, signalIntervalMillis }: ServiceConfig.StorageOptions) => {
  switch (database._tag) {
    case "Sqlite":
      return SqliteStorage.layer({ filename: database.filename, signalIntervalMillis })
    case "Postgres":
      return loadedLayer(
        () => import("@filedata/postgres"),
        ({ PgStorage }) =>
          PgStorage.layer({
            url: database.url,
            poolMax: pool?.max,
            statementTimeoutMillis: pool?.statementTimeoutMillis,
            signalIntervalMillis
          })
      )
  }
}

/**
 * The repository and the operator store of the configured database: SQLite for `file:` URLs, PostgreSQL for
 * `postgres://` ones. The layer opens and migrates the database when it is built, and fails with the address
 * and the driver's reason when it cannot.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ServiceConfig.StorageOptions): Layer.Layer<SqlStorage.Services, DependencyUnavailable> =>
  Layer.mapError(
    adapter(options),
    (cause) =>
      new DependencyUnavailable({
        dependency: "the database",
        variable: "DATABASE_URL",
        address: ServiceConfig.databaseAddress(options.database),
        cause
      })
  )

/**
 * {@link layer} on the `DATABASE_*` variables.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<SqlStorage.Services, DependencyUnavailable | ConfigError.ConfigError> =
  Layer.unwrapEffect(Effect.map(ServiceConfig.storage, layer))
