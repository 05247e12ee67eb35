import { describe, expect, it } from "@effect/vitest"
import { ServiceConfig, StartupFailure } from "@filedata/runtime"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

const read = (env: Record<string, string>) =>
  ServiceConfig.config.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

/** The line a start with `env` prints. */
const refusal = (env: Record<string, string>) => Effect.map(Effect.flip(read(env)), StartupFailure.describe)

describe("ServiceConfig, valid", () => {
  it.effect("without any variable, every default", () =>
    Effect.gen(function* () {
      const config = yield* read({})
      expect(config).toEqual({
        port: 3000,
        host: "0.0.0.0",
        trustProxy: false,
        logLevel: LogLevel.Info,
        http: {
          headersTimeoutMillis: 10_000,
          requestTimeoutMillis: 30_000,
          keepAliveTimeoutMillis: 5_000,
          maxConnections: 1_000,
          maxConnectionsPerAddress: 100,
          firstRequestTimeoutMillis: 5_000,
          drainTimeoutMillis: 10_000,
          sendTimeoutMillis: 30_000,
          collectSentPages: true
        },
        storage: {
          database: { _tag: "Sqlite", filename: "./data/filedata.db" },
          pool: { max: 10, statementTimeoutMillis: 5_000 },
          signalIntervalMillis: 250
        },
        rateLimiting: {
          policy: {
            apiKey: { limit: 60, windowMillis: 60_000 },
            clientAddress: { limit: 600, windowMillis: 60_000 }
          },
          redisUrl: Option.none(),
          failureMode: "memory"
        },
        telemetry: {
          metrics: Option.none(),
          traces: Option.none(),
          resource: { serviceName: "filedata", attributes: {} }
        },
        longPoll: { perKey: 20, perAddress: 100 },
        webhooks: {
          delivery: true,
          retryScheduleMillis: [5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000],
          disableAfterMillis: 432_000_000,
          sender: { allowPrivateNetworks: false, timeoutMillis: 15_000 },
          key: { _tag: "File", path: "./data/webhook-encryption.key" }
        }
      })
    })
  )

  it.effect("reads the webhook delivery variables, and refuses a malformed retry schedule by name", () =>
    Effect.gen(function* () {
      const config = yield* read({
        WEBHOOK_DELIVERY: "false",
        WEBHOOK_RETRY_SCHEDULE_MS: "100, 200,300",
        WEBHOOK_DISABLE_AFTER_MS: "60000"
      })
      expect(config.webhooks).toMatchObject({
        delivery: false,
        retryScheduleMillis: [100, 200, 300],
        disableAfterMillis: 60_000
      })
      for (const schedule of ["", "1,,2", "5s", "0", "-1"]) {
        const error = yield* Effect.flip(read({ WEBHOOK_RETRY_SCHEDULE_MS: schedule }))
        expect(ServiceConfig.formatError(error)).toMatch(/^Invalid configuration: WEBHOOK_RETRY_SCHEDULE_MS: Expected/)
      }
    })
  )

  it.effect("every variable set", () =>
    Effect.gen(function* () {
      const config = yield* read({
        PORT: "0",
        HOST: " ::1 ",
        TRUST_PROXY: "true",
        LOG_LEVEL: "none",
        HTTP_HEADERS_TIMEOUT_MS: "1",
        HTTP_REQUEST_TIMEOUT_MS: "600000",
        HTTP_KEEP_ALIVE_TIMEOUT_MS: "7",
        HTTP_MAX_CONNECTIONS: "1000000",
        HTTP_MAX_CONNECTIONS_PER_ADDRESS: "3",
        HTTP_FIRST_REQUEST_TIMEOUT_MS: "600000",
        HTTP_DRAIN_TIMEOUT_MS: "0",
        HTTP_SEND_TIMEOUT_MS: "250",
        DATABASE_URL: "postgres://u:p@db:5432/filedata?sslmode=require",
        DATABASE_POOL_MAX: "3",
        DATABASE_STATEMENT_TIMEOUT_MS: "0",
        RATE_LIMIT_MAX: "5",
        RATE_LIMIT_IP_MAX: "50",
        RATE_LIMIT_WINDOW_MS: "1000",
        REDIS_URL: "rediss://:secret@cache:6380/2",
        RATE_LIMIT_FAILURE_MODE: "closed",
        HTTP_COLLECT_SENT_PAGES: "false",
        METRICS_PORT: "9464",
        METRICS_HOST: " 0.0.0.0 ",
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_SDK_DISABLED: "false",
        OTEL_SERVICE_NAME: "filedata-eu",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod, team=forms%20%26%20files"
      })
      expect(config).toMatchObject({
        port: 0,
        host: "::1",
        trustProxy: true,
        logLevel: LogLevel.None,
        http: {
          headersTimeoutMillis: 1,
          requestTimeoutMillis: 600_000,
          keepAliveTimeoutMillis: 7,
          maxConnections: 1_000_000,
          maxConnectionsPerAddress: 3,
          firstRequestTimeoutMillis: 600_000,
          drainTimeoutMillis: 0,
          sendTimeoutMillis: 250,
          collectSentPages: false
        },
        storage: { database: { _tag: "Postgres" }, pool: { max: 3, statementTimeoutMillis: 0 } },
        rateLimiting: {
          policy: { apiKey: { limit: 5, windowMillis: 1_000 }, clientAddress: { limit: 50, windowMillis: 1_000 } },
          failureMode: "closed"
        },
        telemetry: {
          metrics: Option.some({ host: "0.0.0.0", port: 9464 }),
          traces: Option.some({ url: "https://collector:4318/v1/traces", protocol: "http/json" }),
          resource: {
            serviceName: "filedata-eu",
            attributes: { "deployment.environment.name": "prod", team: "forms & files" }
          }
        }
      })
      const { database } = config.storage
      expect(database._tag === "Postgres" && Redacted.value(database.url)).toBe(
        "postgres://u:p@db:5432/filedata?sslmode=require"
      )
      expect(Option.map(config.rateLimiting.redisUrl, Redacted.value)).toEqual(
        Option.some("rediss://:secret@cache:6380/2")
      )
    })
  )

  it.effect(
    "the contract's log levels, TRUST_PROXY spellings, SQLite in memory, an empty REDIS_URL as unset, failure modes",
    () =>
      Effect.gen(function* () {
        const levels = { debug: LogLevel.Debug, info: LogLevel.Info, warn: LogLevel.Warning, error: LogLevel.Error }
        for (const [name, level] of Object.entries(levels)) {
          expect((yield* read({ LOG_LEVEL: name })).logLevel).toBe(level)
        }
        for (const text of ["true", "1", "yes", "on"])
          expect((yield* read({ TRUST_PROXY: text })).trustProxy).toBe(true)
        for (const text of ["false", "0", "no", "off"]) {
          expect((yield* read({ TRUST_PROXY: text })).trustProxy).toBe(false)
        }
        expect((yield* read({ DATABASE_URL: "file::memory:" })).storage.database).toEqual({
          _tag: "Sqlite",
          filename: ":memory:"
        })
        expect((yield* read({ DATABASE_URL: "postgresql://db/filedata" })).storage.database._tag).toBe("Postgres")
        expect((yield* read({ REDIS_URL: "" })).rateLimiting.redisUrl).toEqual(Option.none())
        for (const mode of ["memory", "closed", "open"]) {
          expect((yield* read({ RATE_LIMIT_FAILURE_MODE: mode })).rateLimiting.failureMode).toBe(mode)
        }
        // As earlier releases read them: any case, surrounding spaces ignored.
        expect((yield* read({ LOG_LEVEL: " INFO " })).logLevel).toBe(LogLevel.Info)
        expect((yield* read({ LOG_LEVEL: "Warn" })).logLevel).toBe(LogLevel.Warning)
        expect((yield* read({ RATE_LIMIT_FAILURE_MODE: "OPEN" })).rateLimiting.failureMode).toBe("open")
      })
  )

  it.effect(
    "behind a proxy every connection is the proxy's: the per-address cap defaults to HTTP_MAX_CONNECTIONS",
    () =>
      Effect.gen(function* () {
        expect((yield* read({ TRUST_PROXY: "true" })).http.maxConnectionsPerAddress).toBe(1_000)
        expect((yield* read({ TRUST_PROXY: "true", HTTP_MAX_CONNECTIONS: "5000" })).http.maxConnectionsPerAddress).toBe(
          5_000
        )
        expect(
          (yield* read({ TRUST_PROXY: "true", HTTP_MAX_CONNECTIONS_PER_ADDRESS: "40" })).http.maxConnectionsPerAddress
        ).toBe(40)
        expect((yield* read({ HTTP_MAX_CONNECTIONS: "50" })).http.maxConnectionsPerAddress).toBe(100)
      })
  )
})

describe("ServiceConfig, telemetry", () => {
  const telemetry = (env: Record<string, string>) => Effect.map(read(env), (config) => config.telemetry)

  it.effect("traces: the endpoint's /v1/traces, or the signal's own endpoint as it is; protobuf unless told", () =>
    Effect.gen(function* () {
      for (const endpoint of ["http://collector:4318", "http://collector:4318/"]) {
        expect((yield* telemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).traces).toEqual(
          Option.some({ url: "http://collector:4318/v1/traces", protocol: "http/protobuf" })
        )
      }
      expect((yield* telemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example/prefix" })).traces).toEqual(
        Option.some({ url: "https://otel.example/prefix/v1/traces", protocol: "http/protobuf" })
      )
      const own = yield* telemetry({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://general:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:4318/custom",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json"
      })
      expect(own.traces).toEqual(Option.some({ url: "http://traces:4318/custom", protocol: "http/json" }))
      const upper = yield* telemetry({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_PROTOCOL: "HTTP/JSON"
      })
      expect(upper.traces).toEqual(Option.some({ url: "http://collector:4318/v1/traces", protocol: "http/json" }))
    })
  )

  it.effect("off: nothing set, set empty, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none", () =>
    Effect.gen(function* () {
      const off = { metrics: Option.none(), traces: Option.none() }
      expect(yield* telemetry({ METRICS_PORT: "", OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toMatchObject(off)
      const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }
      expect((yield* telemetry({ ...endpoint, OTEL_SDK_DISABLED: "true" })).traces).toEqual(Option.none())
      expect((yield* telemetry({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })).traces).toEqual(Option.none())
      // Enumerations whatever their case, as the OpenTelemetry specification reads them.
      expect((yield* telemetry({ ...endpoint, OTEL_TRACES_EXPORTER: " NONE " })).traces).toEqual(Option.none())
    })
  )

  it.effect("metrics: 127.0.0.1 unless METRICS_HOST; port 0 picks one, also beside PORT=0", () =>
    Effect.gen(function* () {
      expect((yield* telemetry({ METRICS_PORT: "9464" })).metrics).toEqual(
        Option.some({ host: "127.0.0.1", port: 9464 })
      )
      expect((yield* telemetry({ PORT: "0", METRICS_PORT: "0" })).metrics).toEqual(
        Option.some({ host: "127.0.0.1", port: 0 })
      )
    })
  )

  it.effect("the service's name: OTEL_SERVICE_NAME, else service.name among the attributes, else filedata", () =>
    Effect.gen(function* () {
      const attributes = { OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes,a=b=c" }
      expect((yield* telemetry(attributes)).resource).toEqual({
        serviceName: "from-attributes",
        attributes: { "service.name": "from-attributes", a: "b=c" }
      })
      expect((yield* telemetry({ ...attributes, OTEL_SERVICE_NAME: "named" })).resource.serviceName).toBe("named")
    })
  )

  it.effect("refuses METRICS_PORT on the public port", () =>
    Effect.gen(function* () {
      expect(yield* refusal({ METRICS_PORT: "3000" })).toBe(
        'Invalid configuration: METRICS_PORT: Expected a port other than PORT\'s but received "3000"'
      )
      expect(yield* refusal({ PORT: "8080", METRICS_PORT: "8080" })).toBe(
        'Invalid configuration: METRICS_PORT: Expected a port other than PORT\'s but received "8080"'
      )
    })
  )
})

// Every variable with values a start must refuse; each refusal is one line naming the variable.
const invalid: ReadonlyArray<readonly [variable: string, values: ReadonlyArray<string>]> = [
  ["PORT", ["", " ", "eighty", "-1", "65536", "80.5", "1e3", "0x50"]],
  ["HOST", ["", "  "]],
  ["TRUST_PROXY", ["", "maybe", "2"]],
  ["LOG_LEVEL", ["", "verbose", "trace", "warning"]],
  ["HTTP_HEADERS_TIMEOUT_MS", ["0", "600001", "ten"]],
  ["HTTP_REQUEST_TIMEOUT_MS", ["0", "600001", "-5"]],
  ["HTTP_KEEP_ALIVE_TIMEOUT_MS", ["0", "600001", "1.5"]],
  ["HTTP_MAX_CONNECTIONS", ["0", "1000001", "many"]],
  ["HTTP_MAX_CONNECTIONS_PER_ADDRESS", ["", "0", "1000001", "all"]],
  ["HTTP_FIRST_REQUEST_TIMEOUT_MS", ["0", "600001", "5s"]],
  ["HTTP_DRAIN_TIMEOUT_MS", ["-1", "600001", "soon"]],
  ["HTTP_SEND_TIMEOUT_MS", ["0", "600001", "30s"]],
  ["DATABASE_URL", ["", "file:", "./data/filedata.db", "mysql://db/x", "postgres://[::1/x", "sqlite:x.db"]],
  ["DATABASE_POOL_MAX", ["0", "1001", "ten"]],
  ["DATABASE_STATEMENT_TIMEOUT_MS", ["-1", "2147483648", "5s"]],
  ["RATE_LIMIT_MAX", ["0", "-1", "sixty", "9007199254740993"]],
  ["RATE_LIMIT_IP_MAX", ["0", "six hundred"]],
  ["RATE_LIMIT_WINDOW_MS", ["0", "2147483648", "1m"]],
  ["REDIS_URL", ["http://x", "redis:/cache", "127.0.0.1:6379", "redis://[::1", "unix:///tmp/redis.sock"]],
  ["RATE_LIMIT_FAILURE_MODE", ["", "shut", "fail-open"]],
  ["LONG_POLL_MAX_PER_KEY", ["0", "1000001", "few"]],
  ["LONG_POLL_MAX_PER_ADDRESS", ["0", "1000001", "1.5"]],
  ["LONG_POLL_INTERVAL_MS", ["9", "1001", "250ms"]],
  ["METRICS_PORT", ["-1", "65536", "x", "1e3", "9464.0"]],
  ["METRICS_HOST", ["", "  "]],
  ["OTEL_EXPORTER_OTLP_ENDPOINT", ["collector:4318", "grpc://collector:4317", "http://[::1", "//collector"]],
  ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ["ftp://collector/v1/traces", "collector"]],
  ["OTEL_EXPORTER_OTLP_PROTOCOL", ["grpc", "json", "http/json/"]],
  ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", ["grpc", "protobuf"]],
  ["OTEL_TRACES_EXPORTER", ["", "jaeger", "zipkin", "console"]],
  ["OTEL_SDK_DISABLED", ["", "maybe"]],
  ["OTEL_RESOURCE_ATTRIBUTES", ["novalue", "=x", "a=%zz", "a=1,,=2"]]
]

describe("ServiceConfig, invalid", () => {
  for (const [variable, values] of invalid) {
    it.effect(`${variable}: ${values.map((value) => JSON.stringify(value)).join(", ")}`, () =>
      Effect.gen(function* () {
        for (const value of values) {
          const line = yield* refusal({ [variable]: value })
          expect(line).toMatch(new RegExp(`^Invalid configuration: ${variable}: Expected .+ but received `))
          expect(line).not.toContain("\n")
        }
      })
    )
  }

  it.effect("names every variable that is wrong, once each, on one line", () =>
    Effect.gen(function* () {
      const line = yield* refusal({ PORT: "x", RATE_LIMIT_WINDOW_MS: "0", REDIS_URL: "http://x" })
      expect(line).not.toContain("\n")
      for (const variable of ["PORT", "RATE_LIMIT_WINDOW_MS", "REDIS_URL"]) {
        expect(line.split(`${variable}:`)).toHaveLength(2)
      }
    })
  )

  it.effect("never prints a password from a URL, even one that does not parse", () =>
    Effect.gen(function* () {
      const lines = [
        yield* refusal({ REDIS_URL: "http://user:s3cret@cache:6379" }),
        yield* refusal({ REDIS_URL: "redis://user:s3cret@[::1" }),
        yield* refusal({ DATABASE_URL: "mysql://user:s3cret@db/x" }),
        yield* refusal({ DATABASE_URL: "postgres://user:s3/cr@et@[::1/x" })
      ]
      for (const line of lines) {
        expect(line).toMatch(/:\/\/\*\*\*@/)
        expect(line).not.toMatch(/s3|cr@et|user/)
      }
    })
  )
})

describe("ServiceConfig.redactUrl", () => {
  it("replaces the user information and keeps the rest", () => {
    expect(ServiceConfig.redactUrl("postgres://u:p@db:5432/x?sslmode=require")).toBe(
      "postgres://***@db:5432/x?sslmode=require"
    )
    expect(ServiceConfig.redactUrl("rediss://:token@cache:6380")).toBe("rediss://***@cache:6380")
    expect(ServiceConfig.redactUrl("redis://cache:6379")).toBe("redis://cache:6379")
    expect(ServiceConfig.redactUrl("redis:user:secret@cache")).toBe("redis:***@cache")
    expect(ServiceConfig.redactUrl("no url at all")).toBe("no url at all")
  })
})
