/**
 * Metrics and traces, on `@effect/opentelemetry`: Prometheus text at `GET /metrics` on a listener of its own
 * (`METRICS_HOST:METRICS_PORT`), spans exported over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`), and nothing at all,
 * not even the OpenTelemetry modules, when neither is configured. What is measured are Effect `Metric`s, read by
 * the exporter at each scrape: the server's request metrics, the ports' failures counted here, and the process's
 * figures read from Node at the scrape.
 *
 * @since 0.1.0
 */
import { type FileData, type FileDataError, FileRepository, RateLimiter } from "@filedata/core"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { loadedLayer } from "./internal/loadedLayer.js"
import * as ServiceConfig from "./ServiceConfig.js"
import type { CannotListen } from "./StartupFailure.js"

/**
 * What is switched on: code on a request's path asks once, at start, so that nothing is added per request for
 * what is off.
 *
 * @since 0.1.0
 * @category models
 */
export interface Enabled {
  /** `METRICS_PORT` is set: request metrics are recorded. */
  readonly metrics: boolean
  /** Spans are exported: requests and the ports' calls are traced. */
  readonly traces: boolean
}

/**
 * What {@link layer} switched on; both off without it.
 *
 * @since 0.1.0
 * @category tags
 */
export class Settings extends Context.Reference<Settings>()("@filedata/runtime/Telemetry/Settings", {
  defaultValue: (): Enabled => ({ metrics: false, traces: false })
}) {}

/**
 * The metrics listener and the trace export a configuration asks for, and the tracer for every effect built
 * under this layer; a metrics address that cannot be listened on fails the start. With neither configured only
 * {@link Settings} is provided.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ServiceConfig.TelemetryOptions): Layer.Layer<Settings, CannotListen> => {
  const enabled: Enabled = { metrics: Option.isSome(options.metrics), traces: Option.isSome(options.traces) }
  const settings = Layer.succeed(Settings, enabled)
  return enabled.metrics || enabled.traces
    ? Layer.merge(
        settings,
        loadedLayer(
          () => import("./internal/openTelemetry.js"),
          (sdk) => sdk.layer(options)
        )
      )
    : settings
}

/**
 * {@link layer} on the `METRICS_*` and `OTEL_*` variables.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<Settings, CannotListen | ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(ServiceConfig.telemetry, layer)
)

/**
 * A counter of events (a Prometheus `_total`), each update adding the number that happened.
 *
 * @since 0.1.0
 * @category metrics
 */
export const counter = (name: string, description: string): Metric.Metric.Counter<number> =>
  Metric.counter(name, { description, incremental: true })

/**
 * The label set `key=value` of each of `values`, each made once and kept: a metric caches its series by the
 * identity of the label array it is updated with, so an update with a kept array hashes nothing.
 *
 * @since 0.1.0
 * @category metrics
 */
export const labels = <K extends string>(
  key: string,
  values: ReadonlyArray<K>
): Record<K, ReadonlyArray<MetricLabel.MetricLabel>> => {
  const sets = {} as Record<K, ReadonlyArray<MetricLabel.MetricLabel>>
  for (const value of values) sets[value] = [MetricLabel.make(key, value)]
  return sets
}

const storageFailures = counter(
  "filedata_storage_failures_total",
  "Storage calls that failed (StorageUnavailable), by operation"
)

const rateLimiterFailures = counter(
  "filedata_rate_limiter_failures_total",
  "Rate limiter calls that failed because its store was unavailable (RateLimiterUnavailable)"
)

const rateLimitRefusals = counter(
  "filedata_rate_limit_refusals_total",
  "Requests refused by the rate limit, by the quota they were past (apiKey, clientAddress)"
)

type StorageOperation = "findAccess" | "readSubmissions" | "readChanges" | "readContentNames" | "findFile" | "ping"

const operations = labels<StorageOperation>("operation", [
  "findAccess",
  "readSubmissions",
  "readChanges",
  "readContentNames",
  "findFile",
  "ping"
])
const scopes = labels("scope", ["apiKey", "clientAddress"] as const)
const noLabels: ReadonlyArray<MetricLabel.MetricLabel> = []

// A call inside a span that is not sampled gets no span of its own: whatever the sampler, it would not be
// sampled either (parent-based samplers follow the parent, ratio samplers decide by the trace id), and making it
// would cost about as much as a sampled one (docs/performance.md#request-metrics-and-spans).
const inSpan = <A, E>(effect: Effect.Effect<A, E>, name: string, attributes: Record<string, string>) =>
  Effect.flatMap(Effect.serviceOption(Tracer.ParentSpan), (parent) =>
    Option.isSome(parent) && !parent.value.sampled
      ? effect
      : Effect.withSpan(effect, name, { attributes, captureStackTrace: false })
  )

const observedRepository = (files: FileRepository.FileRepository, enabled: Enabled): FileRepository.FileRepository => {
  const observe = <A, E extends { readonly _tag: string }>(
    effect: Effect.Effect<A, E>,
    operation: StorageOperation,
    attributes: Record<string, string>
  ): Effect.Effect<A, E> => {
    const counted = enabled.metrics
      ? Effect.tapError(effect, (failure) =>
          failure._tag === "StorageUnavailable"
            ? Effect.sync(() => storageFailures.unsafeUpdate(1, operations[operation]))
            : Effect.void
        )
      : effect
    return enabled.traces ? inSpan(counted, `FileRepository.${operation}`, attributes) : counted
  }
  const { encodedPages } = files
  const readJoinedChanges = encodedPages?.readJoinedChanges
  return {
    findAccess: (apiKey, fileId) =>
      observe(files.findAccess(apiKey, fileId), "findAccess", { "filedata.file_id": fileId }),
    readSubmissions: (fileId, range) =>
      observe(files.readSubmissions(fileId, range), "readSubmissions", { "filedata.file_id": fileId }),
    readChanges: (fileId, range) =>
      observe(files.readChanges(fileId, range), "readChanges", { "filedata.file_id": fileId }),
    // The optional capability kept when the port has it (without, a reply or an export joins and renders each
    // page in JavaScript, docs/performance.md#export-rows-rendered-at-import), its pages counted as the pages
    // they are.
    ...(encodedPages === undefined
      ? {}
      : {
          encodedPages: {
            readJoined: (fileId, range, form) =>
              observe(encodedPages.readJoined(fileId, range, form), "readSubmissions", {
                "filedata.file_id": fileId
              }),
            readExportRows: (fileId, range, rows) =>
              observe(encodedPages.readExportRows(fileId, range, rows), "readSubmissions", {
                "filedata.file_id": fileId
              }),
            ...(readJoinedChanges === undefined
              ? {}
              : {
                  readJoinedChanges: (fileId: FileData.FileId, range: FileRepository.ChangeRange) =>
                    observe(readJoinedChanges(fileId, range), "readChanges", { "filedata.file_id": fileId })
                })
          }
        }),
    readContentNames: (fileId, upTo) =>
      observe(files.readContentNames(fileId, upTo), "readContentNames", { "filedata.file_id": fileId }),
    findFile: (fileId) => observe(files.findFile(fileId), "findFile", { "filedata.file_id": fileId }),
    ping: observe(files.ping, "ping", {})
  }
}

const observedLimiter = (limiter: RateLimiter.RateLimiter, enabled: Enabled): RateLimiter.RateLimiter => {
  const refused = (failure: FileDataError.RateLimited | FileDataError.RateLimiterUnavailable) =>
    Effect.sync(() =>
      failure._tag === "RateLimited"
        ? rateLimitRefusals.unsafeUpdate(1, scopes[failure.scope])
        : rateLimiterFailures.unsafeUpdate(1, noLabels)
    )
  const { consumeRequest } = limiter
  return {
    policy: limiter.policy,
    ...(limiter.counting === undefined ? {} : { counting: limiter.counting }),
    consume: (subject) => {
      const consumed = limiter.consume(subject)
      const counted = enabled.metrics ? Effect.tapError(consumed, refused) : consumed
      return enabled.traces
        ? inSpan(counted, "RateLimiter.consume", { "filedata.rate_limit.scope": subject.scope })
        : counted
    },
    // With traces, each count keeps its span: the use cases call `consume` twice.
    ...(consumeRequest === undefined || enabled.traces
      ? {}
      : {
          consumeRequest: (address, apiKey) =>
            Effect.tap(Effect.tapError(consumeRequest(address, apiKey), refused), ({ apiKey, clientAddress }) =>
              Effect.zipRight(
                Either.isLeft(clientAddress) ? refused(clientAddress.left) : Effect.void,
                apiKey !== undefined && Either.isLeft(apiKey) ? refused(apiKey.left) : Effect.void
              )
            )
        })
  }
}

/**
 * The storage and rate-limit ports of the context, wrapped once, at start, for what {@link Settings} switched on:
 * a span around each call when traces are exported, and with metrics the failures counted
 * (`filedata_storage_failures_total` by operation, `filedata_rate_limit_refusals_total` by scope,
 * `filedata_rate_limiter_failures_total`); the ports themselves when both are off. No span carries an API key or a
 * client address.
 *
 * @since 0.1.0
 * @category layers
 */
export const instrumentedPorts: Layer.Layer<
  FileRepository.FileRepository | RateLimiter.RateLimiter,
  never,
  FileRepository.FileRepository | RateLimiter.RateLimiter
> = Layer.effectContext(
  Effect.gen(function* () {
    const enabled = yield* Settings
    const files = yield* FileRepository.FileRepository
    const limiter = yield* RateLimiter.RateLimiter
    const on = enabled.metrics || enabled.traces
    // Every series from the start, at 0, for each label value known in advance: a rate over a series that
    // appears only with its first event misses that event.
    if (enabled.metrics) {
      for (const labels of Object.values(operations)) storageFailures.unsafeUpdate(0, labels)
      for (const labels of Object.values(scopes)) rateLimitRefusals.unsafeUpdate(0, labels)
      rateLimiterFailures.unsafeUpdate(0, noLabels)
    }
    return Context.make(FileRepository.FileRepository, on ? observedRepository(files, enabled) : files).pipe(
      Context.add(RateLimiter.RateLimiter, on ? observedLimiter(limiter, enabled) : limiter)
    )
  })
)
