/**
 * The contract's configuration, read from the environment through Effect `Config`; the server and the CLI
 * share it.
 *
 * @since 0.1.0
 */
import type { RateLimiter } from "@filedata/core"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/**
 * Where the data lives, chosen by the scheme of `DATABASE_URL`.
 *
 * @since 0.1.0
 * @category models
 */
export type DatabaseLocation =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted<string> }

/**
 * @since 0.1.0
 * @category models
 */
export interface FiledataConfig {
  readonly port: number
  readonly host: string
  readonly database: DatabaseLocation
  /** PostgreSQL only: connections kept open, and how long one statement may run. */
  readonly databasePool: { readonly max: number; readonly statementTimeoutMillis: number }
  readonly rateLimit: RateLimiter.RateLimitPolicy
  readonly redisUrl: Option.Option<Redacted.Redacted<string>>
  /** With Redis: when it cannot be reached, admit requests (`open`, with a warning) or refuse them (`closed`, 503). */
  readonly rateLimitFailureMode: "open" | "closed"
  readonly trustProxy: boolean
  readonly logLevel: LogLevel.LogLevel
  /** What a slow or stuck client may hold: see `HttpLimits`. */
  readonly http: HttpLimits
}

/**
 * Bounds on what one client may hold of the server.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpLimits {
  /** Time for a request's headers to arrive (`HTTP_HEADERS_TIMEOUT_MS`). */
  readonly headersTimeoutMillis: number
  /** Time for a whole request, headers and body, to arrive (`HTTP_REQUEST_TIMEOUT_MS`). */
  readonly requestTimeoutMillis: number
  /** How long an idle keep-alive connection stays open (`HTTP_KEEP_ALIVE_TIMEOUT_MS`). */
  readonly keepAliveTimeoutMillis: number
  /** Open connections at most; more are refused at once (`HTTP_MAX_CONNECTIONS`). */
  readonly maxConnections: number
  /** How long in-flight requests may go on after a stop signal before their connections are cut (`HTTP_DRAIN_TIMEOUT_MS`). */
  readonly drainTimeoutMillis: number
}

const integer = (name: string, fallback: number, min: number, max: number) =>
  Config.string(name).pipe(
    Config.withDefault(String(fallback)),
    Config.mapOrFail((text) => {
      const value = Number(text)
      return /^\d+$/.test(text.trim()) && Number.isSafeInteger(value) && value >= min && value <= max
        ? Either.right(value)
        : Either.left(ConfigError.InvalidData([name], `must be a whole number from ${min} to ${max}, got "${text}"`))
    })
  )

/**
 * Reads `DATABASE_URL`: `file:PATH` (`file::memory:` in memory) or `postgres://...`.
 *
 * @since 0.1.0
 * @category parsers
 */
export const parseDatabaseUrl = (url: string): Either.Either<DatabaseLocation, string> => {
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length)
    if (path === "") return Either.left("a file: URL needs a path, e.g. file:./data/filedata.db")
    return Either.right({ _tag: "Sqlite", filename: path === ":memory:" ? ":memory:" : path })
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    return Either.right({ _tag: "Postgres", url: Redacted.make(url) })
  }
  return Either.left("must start with file: (SQLite) or postgres:// (PostgreSQL)")
}

const database = Config.string("DATABASE_URL").pipe(
  Config.withDefault("file:./data/filedata.db"),
  Config.mapOrFail((url) =>
    Either.mapLeft(parseDatabaseUrl(url), (problem) => ConfigError.InvalidData(["DATABASE_URL"], problem))
  )
)

const logLevels: Record<string, LogLevel.LogLevel> = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

const logLevel = Config.string("LOG_LEVEL").pipe(
  Config.withDefault("info"),
  Config.mapOrFail((text) => {
    const level = logLevels[text.trim().toLowerCase()]
    return level === undefined
      ? Either.left(
          ConfigError.InvalidData(["LOG_LEVEL"], `must be one of debug, info, warn, error, none, got "${text}"`)
        )
      : Either.right(level)
  })
)

const trustProxy = Config.string("TRUST_PROXY").pipe(
  Config.withDefault("false"),
  Config.mapOrFail((text) => {
    const value = text.trim().toLowerCase()
    return value === "true" || value === "1"
      ? Either.right(true)
      : value === "false" || value === "0"
        ? Either.right(false)
        : Either.left(ConfigError.InvalidData(["TRUST_PROXY"], `must be true or false, got "${text}"`))
  })
)

const host = Config.string("HOST").pipe(
  Config.withDefault("0.0.0.0"),
  Config.mapOrFail((text) =>
    text.trim() === "" ? Either.left(ConfigError.InvalidData(["HOST"], "must not be empty")) : Either.right(text.trim())
  )
)

const rateLimitFailureMode = Config.string("RATE_LIMIT_FAILURE_MODE").pipe(
  Config.withDefault("open"),
  Config.mapOrFail((text) => {
    const value = text.trim().toLowerCase()
    return value === "open" || value === "closed"
      ? Either.right<"open" | "closed">(value)
      : Either.left(ConfigError.InvalidData(["RATE_LIMIT_FAILURE_MODE"], `must be open or closed, got "${text}"`))
  })
)

const redisUrl = Config.option(Config.redacted("REDIS_URL")).pipe(
  Config.map(Option.filter((url) => Redacted.value(url).trim() !== ""))
)

/**
 * Every variable of the contract, with its default.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<FiledataConfig> = Config.all({
  port: integer("PORT", 3000, 0, 65535),
  host,
  database,
  databasePool: Config.all({
    max: integer("DATABASE_POOL_MAX", 10, 1, 1000),
    statementTimeoutMillis: integer("DATABASE_STATEMENT_TIMEOUT_MS", 5_000, 0, 2_147_483_647)
  }),
  rateLimit: Config.all({
    apiKey: Config.all({
      limit: integer("RATE_LIMIT_MAX", 60, 1, Number.MAX_SAFE_INTEGER),
      windowMillis: integer("RATE_LIMIT_WINDOW_MS", 60_000, 1, 2_147_483_647)
    }),
    clientAddress: Config.all({
      limit: integer("RATE_LIMIT_IP_MAX", 600, 1, Number.MAX_SAFE_INTEGER),
      windowMillis: integer("RATE_LIMIT_WINDOW_MS", 60_000, 1, 2_147_483_647)
    })
  }),
  redisUrl,
  rateLimitFailureMode,
  trustProxy,
  logLevel,
  http: Config.all({
    headersTimeoutMillis: integer("HTTP_HEADERS_TIMEOUT_MS", 10_000, 1, 600_000),
    requestTimeoutMillis: integer("HTTP_REQUEST_TIMEOUT_MS", 30_000, 1, 600_000),
    keepAliveTimeoutMillis: integer("HTTP_KEEP_ALIVE_TIMEOUT_MS", 5_000, 1, 600_000),
    maxConnections: integer("HTTP_MAX_CONNECTIONS", 1_000, 1, 1_000_000),
    drainTimeoutMillis: integer("HTTP_DRAIN_TIMEOUT_MS", 10_000, 1, 600_000)
  })
})

const firstProblem = (error: ConfigError.ConfigError): string => {
  switch (error._op) {
    case "And":
    case "Or":
      return firstProblem(error.left)
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported":
      return error.path.length === 0 ? error.message : `${error.path.join(".")} ${error.message}`
  }
}

/**
 * One line naming the variable and what is wrong with it, for the start-up failure.
 *
 * @since 0.1.0
 * @category errors
 */
export const formatError = (error: ConfigError.ConfigError): string => `Invalid configuration: ${firstProblem(error)}`
