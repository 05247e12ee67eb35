/**
 * The service's configuration, read from the environment through Effect `Config`; the server and the CLI
 * share it. The README's configuration table lists every variable with its default.
 *
 * @since 0.1.0
 */
import { DeliverWebhooks, type RateLimiter, SubmissionSignals, WaitingRequests } from "@filedata/core"
import { HttpWebhookSender, SealedSecrets } from "@filedata/webhooks-node"
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
 * PostgreSQL only: connections kept open, and how long one statement may run.
 *
 * @since 0.1.0
 * @category models
 */
export interface DatabasePool {
  /** `DATABASE_POOL_MAX` */
  readonly max: number
  /** `DATABASE_STATEMENT_TIMEOUT_MS` */
  readonly statementTimeoutMillis: number
}

/**
 * What `Storage.layer` needs: the database, and the pool for PostgreSQL (the adapter's defaults without one).
 *
 * @since 0.1.0
 * @category models
 */
export interface StorageOptions {
  readonly database: DatabaseLocation
  readonly pool?: DatabasePool | undefined
  /** How often waiting requests' files are looked at (`LONG_POLL_INTERVAL_MS`); the adapter's default without it. */
  readonly signalIntervalMillis?: number | undefined
}

/**
 * What `RateLimiting.layer` needs: the quotas, and where they are counted.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimitingOptions {
  readonly policy: RateLimiter.RateLimitPolicy
  /** Set: counted in that Redis, shared by every instance; unset: in this process's memory. */
  readonly redisUrl: Option.Option<Redacted.Redacted<string>>
  /**
   * With Redis: while it cannot be reached, count in this process's memory (`memory`), refuse requests
   * (`closed`, 503), or admit them uncounted (`open`, kept for configurations that chose it).
   */
  readonly failureMode: "memory" | "closed" | "open"
}

/**
 * Bounds on what one client may hold of the server, and on how long a stop waits for it.
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
  /**
   * Open connections one client address may hold, an IPv6 address counted by its /64 prefix; more from it
   * are refused at once (`HTTP_MAX_CONNECTIONS_PER_ADDRESS`). The address is the socket's peer: behind a
   * proxy, the proxy's.
   */
  readonly maxConnectionsPerAddress: number
  /** Time from a connection's accept until its first request head is complete (`HTTP_FIRST_REQUEST_TIMEOUT_MS`). */
  readonly firstRequestTimeoutMillis: number
  /** How long replies in flight may go on after a stop signal before their connections are cut (`HTTP_DRAIN_TIMEOUT_MS`). */
  readonly drainTimeoutMillis: number
  /** How long a reply may go on while the client accepts nothing of it, before it is abandoned (`HTTP_SEND_TIMEOUT_MS`). */
  readonly sendTimeoutMillis: number
}

/**
 * Where spans go: an OTLP/HTTP endpoint for traces, and the encoding of the requests sent to it.
 *
 * @since 0.1.0
 * @category models
 */
export interface TraceExport {
  /** `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, or `v1/traces` under `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  /** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` or `OTEL_EXPORTER_OTLP_PROTOCOL`; `http/protobuf` when neither is set. */
  readonly protocol: "http/protobuf" | "http/json"
}

/**
 * What `Telemetry.layer` needs: the Prometheus listener and the trace export, each off when not configured,
 * and the resource both describe the service with.
 *
 * @since 0.1.0
 * @category models
 */
export interface TelemetryOptions {
  /** `METRICS_HOST` and `METRICS_PORT`; none when `METRICS_PORT` is unset: no metrics listener. */
  readonly metrics: Option.Option<{ readonly host: string; readonly port: number }>
  /** None unless an OTLP endpoint is set (and `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER=none` do not say otherwise). */
  readonly traces: Option.Option<TraceExport>
  /** `OTEL_SERVICE_NAME` (default `filedata`) and `OTEL_RESOURCE_ATTRIBUTES`. */
  readonly resource: { readonly serviceName: string; readonly attributes: Readonly<Record<string, string>> }
}

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
 * `WEBHOOK_*`: whether this instance delivers, the retry schedule and when a failing webhook is disabled, and what
 * the sender (`HttpWebhookSender`) and the secrets' key (`SealedSecrets`) of `@filedata/webhooks-node` read.
 *
 * @since 0.2.0
 * @category models
 */
export interface WebhookOptions {
  /** `WEBHOOK_DELIVERY` (default true): false for an instance that should only serve reads. */
  readonly delivery: boolean
  readonly retryScheduleMillis: ReadonlyArray<number>
  readonly disableAfterMillis: number
  readonly sender: HttpWebhookSender.Options
  readonly key: SealedSecrets.KeySource
}

/**
 * A URL as it may be printed: its user information, which may hold a password, replaced by `***`. Text that
 * does not parse is treated the same way, so a malformed URL cannot leak its password either.
 *
 * @since 0.1.0
 * @category formatting
 */
export const redactUrl = (text: string): string => {
  const scheme = text.indexOf(":")
  const authority = text.startsWith("//", scheme + 1) ? scheme + 3 : scheme + 1
  const at = text.lastIndexOf("@")
  return scheme > 0 && at >= authority ? `${text.slice(0, authority)}***${text.slice(at)}` : text
}

const quoted = (text: string): string => JSON.stringify(text)

// A variable read by `parse`, whose refusals name the variable through the config's path as Effect's own
// primitives do; `parse` says what was expected, in Effect's words ("Expected ... but received ...").
const variable = <A>(name: string, parse: (text: string) => Either.Either<A, string>): Config.Config<A> =>
  Config.nested(
    Config.primitive(name, (text) => Either.mapLeft(parse(text), (message) => ConfigError.InvalidData([], message))),
    name
  )

// `Config.integer` reads an empty or blank value as 0 and accepts `1e3`, so a blank `PORT` would pick a random
// port; a whole number here is digits only.
const wholeNumberIn = (name: string, min: number, max: number): Config.Config<number> =>
  variable(name, (text) => {
    const value = Number(text)
    return /^\d+$/.test(text.trim()) && Number.isSafeInteger(value) && value >= min && value <= max
      ? Either.right(value)
      : Either.left(`Expected a whole number from ${min} to ${max} but received ${quoted(text)}`)
  })

const wholeNumber = (name: string, fallback: number, min: number, max: number): Config.Config<number> =>
  wholeNumberIn(name, min, max).pipe(Config.withDefault(fallback))

/**
 * Reads `DATABASE_URL`: `file:PATH` (`file::memory:` in memory) or `postgres://...`; a refusal says what was
 * expected, never with the URL's password.
 *
 * @since 0.1.0
 * @category parsers
 */
export const parseDatabaseUrl = (url: string): Either.Either<DatabaseLocation, string> => {
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length)
    return path === ""
      ? Either.left(`Expected a path after file: (e.g. file:./data/filedata.db) but received ${quoted(url)}`)
      : Either.right({ _tag: "Sqlite", filename: path })
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    return URL.canParse(url)
      ? Either.right({ _tag: "Postgres", url: Redacted.make(url) })
      : Either.left(`Expected a valid postgres:// URL but received ${quoted(redactUrl(url))}`)
  }
  return Either.left(
    `Expected file:PATH (SQLite) or postgres://... (PostgreSQL) but received ${quoted(redactUrl(url))}`
  )
}

/**
 * Where a database is, as it may be printed: the `DATABASE_URL` it came from, without its password.
 *
 * @since 0.1.0
 * @category formatting
 */
export const databaseAddress = (database: DatabaseLocation): string =>
  database._tag === "Sqlite" ? `file:${database.filename}` : redactUrl(Redacted.value(database.url))

const database: Config.Config<DatabaseLocation> = variable("DATABASE_URL", parseDatabaseUrl).pipe(
  Config.withDefault<DatabaseLocation>({ _tag: "Sqlite", filename: "./data/filedata.db" })
)

// ioredis would read any other scheme as a host name and start anyway: the limiter would then only warn.
const redisUrl: Config.Config<Option.Option<Redacted.Redacted<string>>> = variable("REDIS_URL", (text) =>
  text.trim() === ""
    ? Either.right(Option.none())
    : /^rediss?:\/\//.test(text) && URL.canParse(text)
      ? Either.right(Option.some(Redacted.make(text)))
      : Either.left(`Expected a redis:// or rediss:// URL but received ${quoted(redactUrl(text))}`)
).pipe(Config.withDefault(Option.none()))

const host = variable("HOST", (text) =>
  text.trim() === ""
    ? Either.left(`Expected a host name or address but received ${quoted(text)}`)
    : Either.right(text.trim())
).pipe(Config.withDefault("0.0.0.0"))

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

// A name among `names`, read as earlier releases read these variables: whatever its case, surrounding spaces
// ignored (`LOG_LEVEL=INFO` has always started the service).
const oneOf = <const Name extends string>(name: string, names: ReadonlyArray<Name>): Config.Config<Name> =>
  variable(name, (text) => {
    const value = text.trim().toLowerCase()
    return (names as ReadonlyArray<string>).includes(value)
      ? Either.right(value as Name)
      : Either.left(`Expected one of ${names.join(", ")} but received ${quoted(text)}`)
  })

const logLevel = oneOf("LOG_LEVEL", logLevelNames).pipe(
  Config.withDefault<LogLevelName>("info"),
  Config.map((name) => logLevels[name])
)

// Effect's `Config.boolean` takes these spellings but says only "Expected a boolean value": the refusal lists them.
const flagSpellings = { true: true, yes: true, on: true, "1": true, false: false, no: false, off: false, "0": false }

const flag = (name: string): Config.Config<boolean> =>
  variable(name, (text) => {
    const value = text.trim().toLowerCase()
    return Object.hasOwn(flagSpellings, value)
      ? Either.right(flagSpellings[value as keyof typeof flagSpellings])
      : Either.left(`Expected true, false, 1, 0, yes, no, on or off but received ${quoted(text)}`)
  })

const trustProxy = flag("TRUST_PROXY").pipe(Config.withDefault(false))

/**
 * What one client address may hold by default when clients reach the server directly: a tenth of the default
 * `HTTP_MAX_CONNECTIONS`, far more than a client needs and far too few to lock anyone else out.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxConnectionsPerAddress = 100

/**
 * The default of `HTTP_SEND_TIMEOUT_MS`, also the send timeout of a server built without a configuration.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultSendTimeoutMillis = 30_000

/**
 * `HTTP_*`: the limits on slow clients (sending or reading) and the drain after a stop signal. Behind a proxy (`TRUST_PROXY=true`)
 * every connection comes from the proxy, so the per-address cap defaults to `HTTP_MAX_CONNECTIONS` there.
 *
 * @since 0.1.0
 * @category config
 */
export const http: Config.Config<HttpLimits> = Config.all({
  headersTimeoutMillis: wholeNumber("HTTP_HEADERS_TIMEOUT_MS", 10_000, 1, 600_000),
  requestTimeoutMillis: wholeNumber("HTTP_REQUEST_TIMEOUT_MS", 30_000, 1, 600_000),
  keepAliveTimeoutMillis: wholeNumber("HTTP_KEEP_ALIVE_TIMEOUT_MS", 5_000, 1, 600_000),
  maxConnections: wholeNumber("HTTP_MAX_CONNECTIONS", 1_000, 1, 1_000_000),
  maxConnectionsPerAddress: Config.option(wholeNumberIn("HTTP_MAX_CONNECTIONS_PER_ADDRESS", 1, 1_000_000)),
  firstRequestTimeoutMillis: wholeNumber("HTTP_FIRST_REQUEST_TIMEOUT_MS", 5_000, 1, 600_000),
  drainTimeoutMillis: wholeNumber("HTTP_DRAIN_TIMEOUT_MS", 10_000, 0, 600_000),
  sendTimeoutMillis: wholeNumber("HTTP_SEND_TIMEOUT_MS", defaultSendTimeoutMillis, 1, 600_000),
  trustProxy
}).pipe(
  Config.map(({ maxConnectionsPerAddress, trustProxy, ...limits }) => ({
    ...limits,
    maxConnectionsPerAddress: Option.getOrElse(maxConnectionsPerAddress, () =>
      trustProxy ? limits.maxConnections : defaultMaxConnectionsPerAddress
    )
  }))
)

/**
 * `DATABASE_URL` and the PostgreSQL pool, as `Storage.layer` takes them.
 *
 * @since 0.1.0
 * @category config
 */
export const storage: Config.Config<StorageOptions> = Config.all({
  database,
  pool: Config.all({
    max: wholeNumber("DATABASE_POOL_MAX", 10, 1, 1000),
    statementTimeoutMillis: wholeNumber("DATABASE_STATEMENT_TIMEOUT_MS", 5_000, 0, 2_147_483_647)
  }),
  // At most a second, so an append by any process answers a waiting request within the contract's 1 s.
  signalIntervalMillis: wholeNumber("LONG_POLL_INTERVAL_MS", SubmissionSignals.defaultIntervalMillis, 10, 1000)
})

/**
 * `LONG_POLL_MAX_PER_KEY` and `LONG_POLL_MAX_PER_ADDRESS`: how many requests one key and one client address may
 * have waiting at once.
 *
 * @since 0.2.0
 * @category config
 */
export const longPoll: Config.Config<WaitingRequests.Limits> = Config.all({
  perKey: wholeNumber("LONG_POLL_MAX_PER_KEY", WaitingRequests.defaultLimits.perKey, 1, 1_000_000),
  perAddress: wholeNumber("LONG_POLL_MAX_PER_ADDRESS", WaitingRequests.defaultLimits.perAddress, 1, 1_000_000)
})

/**
 * The quotas, `REDIS_URL` and the failure mode, as `RateLimiting.layer` takes them.
 *
 * @since 0.1.0
 * @category config
 */
export const rateLimiting: Config.Config<RateLimitingOptions> = Config.all({
  apiKeyLimit: wholeNumber("RATE_LIMIT_MAX", 60, 1, Number.MAX_SAFE_INTEGER),
  clientAddressLimit: wholeNumber("RATE_LIMIT_IP_MAX", 600, 1, Number.MAX_SAFE_INTEGER),
  windowMillis: wholeNumber("RATE_LIMIT_WINDOW_MS", 60_000, 1, 2_147_483_647),
  redisUrl,
  failureMode: oneOf("RATE_LIMIT_FAILURE_MODE", ["memory", "closed", "open"]).pipe(Config.withDefault("memory"))
}).pipe(
  Config.map(({ apiKeyLimit, clientAddressLimit, failureMode, redisUrl, windowMillis }) => ({
    policy: {
      apiKey: { limit: apiKeyLimit, windowMillis },
      clientAddress: { limit: clientAddressLimit, windowMillis }
    },
    redisUrl,
    failureMode
  }))
)

// Unset and empty mean the same, as for `REDIS_URL`: a deployment template may pass the variable empty.
const optional = <A>(
  name: string,
  parse: (text: string) => Either.Either<A, string>
): Config.Config<Option.Option<A>> =>
  variable(name, (text) =>
    text.trim() === "" ? Either.right(Option.none()) : Either.map(parse(text), Option.some)
  ).pipe(Config.withDefault(Option.none()))

const metricsPort = optional("METRICS_PORT", (text) => {
  const value = Number(text)
  return /^\d+$/.test(text.trim()) && value <= 65535
    ? Either.right(value)
    : Either.left(`Expected a whole number from 0 to 65535 but received ${quoted(text)}`)
})

const metricsHost = variable("METRICS_HOST", (text) =>
  text.trim() === ""
    ? Either.left(`Expected a host name or address but received ${quoted(text)}`)
    : Either.right(text.trim())
).pipe(Config.withDefault("127.0.0.1"))

// The exporter would take any text and only warn, once, that it cannot send: spans would be lost unnoticed.
const httpUrl = (text: string): Either.Either<string, string> =>
  /^https?:\/\//i.test(text.trim()) && URL.canParse(text.trim())
    ? Either.right(text.trim())
    : Either.left(`Expected an http:// or https:// URL but received ${quoted(redactUrl(text))}`)

// Whatever its case, as the OpenTelemetry specification reads its enumerations.
const otlpProtocol = (name: string) =>
  optional(name, (text) => {
    const value = text.trim().toLowerCase()
    return value === "http/protobuf" || value === "http/json"
      ? Either.right(value as TraceExport["protocol"])
      : Either.left(`Expected http/protobuf or http/json (grpc is not supported) but received ${quoted(text)}`)
  })

// OTEL_RESOURCE_ATTRIBUTES: `key=value` pairs separated by commas, values percent-encoded (W3C Baggage's
// format, as the OpenTelemetry specification says).
const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

const resourceAttributes = optional("OTEL_RESOURCE_ATTRIBUTES", (text) => {
  const attributes: Record<string, string> = {}
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue
    const equals = pair.indexOf("=")
    const key = pair.slice(0, Math.max(0, equals)).trim()
    const value = decoded(pair.slice(equals + 1).trim())
    if (key === "" || value === undefined) {
      return Either.left(`Expected key=value pairs, values percent-encoded, but received ${quoted(text)}`)
    }
    attributes[key] = value
  }
  return Either.right(attributes)
})

/**
 * `METRICS_*` and the standard `OTEL_*` variables this service reads itself, as `Telemetry.layer` takes them;
 * the OpenTelemetry SDK reads the others (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_*`, `OTEL_TRACES_SAMPLER`, ...)
 * on its own.
 *
 * @since 0.1.0
 * @category config
 */
export const telemetry: Config.Config<TelemetryOptions> = Config.all({
  metricsPort,
  metricsHost,
  endpoint: optional("OTEL_EXPORTER_OTLP_ENDPOINT", httpUrl),
  tracesEndpoint: optional("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", httpUrl),
  protocol: otlpProtocol("OTEL_EXPORTER_OTLP_PROTOCOL"),
  tracesProtocol: otlpProtocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
  exporter: oneOf("OTEL_TRACES_EXPORTER", ["otlp", "none"]).pipe(Config.withDefault("otlp")),
  disabled: flag("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  serviceName: optional("OTEL_SERVICE_NAME", (text) => Either.right(text.trim())),
  attributes: resourceAttributes
}).pipe(
  Config.map((read): TelemetryOptions => {
    const attributes = Option.getOrElse(read.attributes, (): Record<string, string> => ({}))
    // A signal's own endpoint is taken as it is; the general one gets the signal's path appended.
    const url = Option.orElse(read.tracesEndpoint, () =>
      Option.map(read.endpoint, (endpoint) => `${endpoint.endsWith("/") ? endpoint : `${endpoint}/`}v1/traces`)
    )
    return {
      metrics: Option.map(read.metricsPort, (port) => ({ host: read.metricsHost, port })),
      traces:
        read.disabled || read.exporter === "none"
          ? Option.none()
          : Option.map(url, (url) => ({
              url,
              protocol: Option.getOrElse(
                Option.orElse(read.tracesProtocol, () => read.protocol),
                () => "http/protobuf"
              )
            })),
      resource: {
        // OTEL_SERVICE_NAME wins over a `service.name` in the attributes, as the specification says.
        serviceName: Option.getOrElse(read.serviceName, () => attributes["service.name"] ?? "filedata"),
        attributes
      }
    }
  })
)

const retrySchedule = variable("WEBHOOK_RETRY_SCHEDULE_MS", (text) => {
  const delays = text.split(",").map((part) => part.trim())
  return delays.length <= 100 &&
    delays.every((delay) => /^\d+$/.test(delay) && Number(delay) >= 1 && Number(delay) <= 2_592_000_000)
    ? Either.right(delays.map(Number))
    : Either.left(
        `Expected comma-separated whole numbers of milliseconds from 1 to 2592000000 but received ${quoted(text)}`
      )
}).pipe(Config.withDefault<ReadonlyArray<number>>(DeliverWebhooks.defaults.retryScheduleMillis))

/**
 * `WEBHOOK_*`, as `Webhooks.layer` takes them.
 *
 * @since 0.2.0
 * @category config
 */
export const webhooks: Config.Config<WebhookOptions> = Config.all({
  delivery: flag("WEBHOOK_DELIVERY").pipe(Config.withDefault(true)),
  retryScheduleMillis: retrySchedule,
  disableAfterMillis: wholeNumber(
    "WEBHOOK_DISABLE_AFTER_MS",
    DeliverWebhooks.defaults.disableAfterMillis,
    1,
    Number.MAX_SAFE_INTEGER
  ),
  sender: HttpWebhookSender.config,
  key: SealedSecrets.keySource
})

/**
 * Every variable, with its default; reading it validates them all, so one bad value stops the start before
 * anything is opened.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<ServiceConfig> = Config.all({
  port: wholeNumber("PORT", 3000, 0, 65535),
  host,
  trustProxy,
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
