/**
 * The service's configuration, read from the environment through Effect `Config`; the server and the CLI
 * share it. Each section is defined in `internal/` (one module per section, on the readers of
 * `internal/configVariables.ts`); this module names them and reads them all at once. The README's
 * configuration table lists every variable with its default.
 *
 * @since 0.1.0
 */
import type { WaitingRequests } from "@filedata/core"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as variables from "./internal/configVariables.js"
import * as httpConfig from "./internal/httpConfig.js"
import * as rateLimitingConfig from "./internal/rateLimitingConfig.js"
import * as storageConfig from "./internal/storageConfig.js"
import * as telemetryConfig from "./internal/telemetryConfig.js"
import * as webhooksConfig from "./internal/webhooksConfig.js"

/**
 * Where the data lives, chosen by the scheme of `DATABASE_URL`.
 *
 * @since 0.1.0
 * @category models
 */
export type DatabaseLocation = storageConfig.DatabaseLocation

/**
 * PostgreSQL only: connections kept open, and how long one statement may run.
 *
 * @since 0.1.0
 * @category models
 */
export type DatabasePool = storageConfig.DatabasePool

/**
 * What `Storage.layer` needs: the database, and the pool for PostgreSQL (the adapter's defaults without one).
 *
 * @since 0.1.0
 * @category models
 */
export type StorageOptions = storageConfig.StorageOptions

/**
 * What `RateLimiting.layer` needs: the quotas, and where they are counted.
 *
 * @since 0.1.0
 * @category models
 */
export type RateLimitingOptions = rateLimitingConfig.RateLimitingOptions

/**
 * Bounds on what one client may hold of the server, and on how long a stop waits for it.
 *
 * @since 0.1.0
 * @category models
 */
export type HttpLimits = httpConfig.HttpLimits

/**
 * Where spans go: an OTLP/HTTP endpoint for traces, and the encoding of the requests sent to it.
 *
 * @since 0.1.0
 * @category models
 */
export type TraceExport = telemetryConfig.TraceExport

/**
 * What `Telemetry.layer` needs: the Prometheus listener and the trace export, each off when not configured,
 * and the resource both describe the service with.
 *
 * @since 0.1.0
 * @category models
 */
export type TelemetryOptions = telemetryConfig.TelemetryOptions

/**
 * `WEBHOOK_*`: whether this instance delivers, the retry schedule and when a failing webhook is disabled, and what
 * the sender (`HttpWebhookSender`) and the secrets' key (`SealedSecrets`) of `@filedata/webhooks-node` read.
 *
 * @since 0.2.0
 * @category models
 */
export type WebhookOptions = webhooksConfig.WebhookOptions

/**
 * @since 0.1.0
 * @category models
 */
export interface ServiceConfig {
  readonly port: number
  readonly host: string
  readonly trustProxy: boolean
  readonly logLevel: LogLevel.LogLevel
  /** What a slow or stuck client may hold: see `HttpLimits`. */
  readonly http: HttpLimits
  readonly storage: StorageOptions
  readonly rateLimiting: RateLimitingOptions
  readonly telemetry: TelemetryOptions
  /** How many requests may wait for submissions at once, per key and per address (`LONG_POLL_MAX_PER_*`). */
  readonly longPoll: WaitingRequests.Limits
  readonly webhooks: WebhookOptions
}

/**
 * A URL as it may be printed: its user information, which may hold a password, replaced by `***`. Text that
 * does not parse is treated the same way, so a malformed URL cannot leak its password either.
 *
 * @since 0.1.0
 * @category formatting
 */
export const redactUrl: (text: string) => string = variables.redactUrl

/**
 * Reads `DATABASE_URL`: `file:PATH` (`file::memory:` in memory) or `postgres://...`; a refusal says what was
 * expected, never with the URL's password.
 *
 * @since 0.1.0
 * @category parsers
 */
export const parseDatabaseUrl: (url: string) => Either.Either<DatabaseLocation, string> = storageConfig.parseDatabaseUrl

/**
 * Where a database is, as it may be printed: the `DATABASE_URL` it came from, without its password.
 *
 * @since 0.1.0
 * @category formatting
 */
export const databaseAddress: (database: DatabaseLocation) => string = storageConfig.databaseAddress

/**
 * The log level names of the contract, for `LOG_LEVEL` and the CLI's `--log-level` alike. Effect's own
 * labels differ (`warning`, no `none`; `trace`, `fatal`, `all`).
 *
 * @since 0.1.0
 * @category constants
 */
export const logLevelNames = ["debug", "info", "warn", "error", "none"] as const

/**
 * One of {@link logLevelNames}.
 *
 * @since 0.1.0
 * @category models
 */
export type LogLevelName = (typeof logLevelNames)[number]

/**
 * The Effect log level of each name.
 *
 * @since 0.1.0
 * @category constants
 */
export const logLevels: { readonly [Name in LogLevelName]: LogLevel.LogLevel } = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

/**
 * Whether a text is one of {@link logLevelNames}.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isLogLevelName = (text: string): text is LogLevelName =>
  (logLevelNames as ReadonlyArray<string>).includes(text)

const logLevel = variables.oneOf("LOG_LEVEL", logLevelNames).pipe(
  Config.withDefault<LogLevelName>("info"),
  Config.map((name) => logLevels[name])
)

/**
 * What one client address may hold by default when clients reach the server directly: a tenth of the default
 * `HTTP_MAX_CONNECTIONS`, far more than a client needs and far too few to lock anyone else out.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxConnectionsPerAddress: number = httpConfig.defaultMaxConnectionsPerAddress

/**
 * The default of `HTTP_SEND_TIMEOUT_MS`, also the send timeout of a server built without a configuration.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultSendTimeoutMillis: number = httpConfig.defaultSendTimeoutMillis

/**
 * `HTTP_*`: the limits on slow clients (sending or reading) and the drain after a stop signal. Behind a proxy (`TRUST_PROXY=true`)
 * every connection comes from the proxy, so the per-address cap defaults to `HTTP_MAX_CONNECTIONS` there.
 *
 * @since 0.1.0
 * @category config
 */
export const http: Config.Config<HttpLimits> = httpConfig.http

/**
 * `DATABASE_URL` and the PostgreSQL pool, as `Storage.layer` takes them.
 *
 * @since 0.1.0
 * @category config
 */
export const storage: Config.Config<StorageOptions> = storageConfig.storage

/**
 * `LONG_POLL_MAX_PER_KEY` and `LONG_POLL_MAX_PER_ADDRESS`: how many requests one key and one client address may
 * have waiting at once.
 *
 * @since 0.2.0
 * @category config
 */
export const longPoll: Config.Config<WaitingRequests.Limits> = httpConfig.longPoll

/**
 * The quotas, `REDIS_URL` and the failure mode, as `RateLimiting.layer` takes them.
 *
 * @since 0.1.0
 * @category config
 */
export const rateLimiting: Config.Config<RateLimitingOptions> = rateLimitingConfig.rateLimiting

/**
 * `METRICS_*` and the standard `OTEL_*` variables this service reads itself, as `Telemetry.layer` takes them;
 * the OpenTelemetry SDK reads the others (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_*`, `OTEL_TRACES_SAMPLER`, ...)
 * on its own.
 *
 * @since 0.1.0
 * @category config
 */
export const telemetry: Config.Config<TelemetryOptions> = telemetryConfig.telemetry

/**
 * `WEBHOOK_*`, as `Webhooks.layer` takes them.
 *
 * @since 0.2.0
 * @category config
 */
export const webhooks: Config.Config<WebhookOptions> = webhooksConfig.webhooks

/**
 * Every variable, with its default; reading it validates them all, so one bad value stops the start before
 * anything is opened.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<ServiceConfig> = Config.all({
  port: variables.wholeNumber("PORT", 3000, 0, 65535),
  host: variables.hostName("HOST", "0.0.0.0"),
  trustProxy: httpConfig.trustProxy,
  logLevel,
  http,
  storage,
  rateLimiting,
  telemetry,
  longPoll,
  webhooks
}).pipe(
  // The metrics stay off the public port: whoever reaches the service must not read its metrics.
  Config.mapOrFail((config) =>
    Option.exists(config.telemetry.metrics, ({ port }) => port !== 0 && port === config.port)
      ? Either.left(
          ConfigError.InvalidData(["METRICS_PORT"], `Expected a port other than PORT's but received "${config.port}"`)
        )
      : Either.right(config)
  )
)

const problems = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...problems(error.left), ...problems(error.right)]
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported":
      return [error.path.length === 0 ? error.message : `${error.path.join(".")}: ${error.message}`]
  }
}

/**
 * One line naming each variable that is wrong and what is wrong with it, for the start-up failure.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatError = (error: ConfigError.ConfigError): string =>
  `Invalid configuration: ${[...new Set(problems(error))].join("; ")}`
