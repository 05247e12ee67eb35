import { describe, expect, it } from "@effect/vitest"
import { FileData, FileDataError, FileRepository, RateLimiter } from "@filedata/core"
import { Logging, Telemetry } from "@filedata/runtime"
import type * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Tracer from "effect/Tracer"

const KEY = "telemetry-unit-secret-key"
const apiKey = Redacted.make(FileData.ApiKeyText.make(KEY))
const fileId = FileData.FileId.make("file-1")

const unavailable = new FileDataError.StorageUnavailable({ cause: new Error("gone") })

/** Ports whose every call fails as an outage, or as a refusal for `apiKey` counts. */
const failingPorts = Layer.succeedContext(
  Context.make(FileRepository.FileRepository, {
    findAccess: () => Effect.fail(unavailable),
    readSubmissions: () => Effect.fail(unavailable),
    readChanges: () => Effect.fail(unavailable),
    readContentNames: () => Effect.fail(unavailable),
    findFile: () => Effect.fail(unavailable),
    ping: Effect.fail(unavailable)
  }).pipe(
    Context.add(RateLimiter.RateLimiter, {
      policy: {
        apiKey: { limit: 1, windowMillis: 1_000 },
        clientAddress: { limit: 1, windowMillis: 1_000 }
      },
      counting: Effect.succeed("memory" as const),
      consume: (subject) =>
        subject.scope === "apiKey"
          ? Effect.fail(new FileDataError.RateLimited({ scope: "apiKey", limit: 1, retryAfterMillis: 500 }))
          : Effect.fail(new FileDataError.RateLimiterUnavailable({ cause: new Error("down") }))
    })
  )
)

const instrumented = (enabled: Telemetry.Enabled) =>
  Telemetry.instrumentedPorts.pipe(
    Layer.provide(failingPorts),
    Layer.provide(Layer.succeed(Telemetry.Settings, enabled))
  )

/** The value of every series of the counter `name`, by its labels. */
const counters = (name: string): Record<string, number> => {
  const values: Record<string, number> = {}
  for (const { metricKey, metricState } of Metric.unsafeSnapshot()) {
    if (metricKey.name !== name || !("count" in metricState)) continue
    values[metricKey.tags.map((tag) => `${tag.key}=${tag.value}`).join(",")] = Number(metricState.count)
  }
  return values
}

const delta = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([labels, value]) => [labels, value - (before[labels] ?? 0)]))

/** Calls every port once, whatever each answers. */
const callEvery = Effect.gen(function* () {
  const files = yield* FileRepository.FileRepository
  const limiter = yield* RateLimiter.RateLimiter
  yield* Effect.exit(files.findAccess(apiKey, fileId))
  yield* Effect.exit(files.readSubmissions(fileId, {}))
  yield* Effect.exit(files.readChanges(fileId, {}))
  yield* Effect.exit(files.readContentNames(fileId, FileRepository.ReadPoint("1")))
  yield* Effect.exit(files.findFile(fileId))
  yield* Effect.exit(files.ping)
  yield* Effect.exit(limiter.consume({ scope: "clientAddress", address: "192.0.2.7" }))
  yield* Effect.exit(limiter.consume({ scope: "apiKey", apiKey }))
  return { files, limiter }
})

interface Recorded {
  readonly name: string
  readonly attributes: Map<string, unknown>
  readonly parent: Option.Option<Tracer.AnySpan>
}

/** A tracer that keeps every span it makes. */
const recordingTracer = () => {
  const spans: Array<Recorded> = []
  let next = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const attributes = new Map<string, unknown>()
      spans.push({ name, attributes, parent })
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: `span-${++next}`,
        traceId: "trace",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        end: () => {},
        attribute: (key, value) => void attributes.set(key, value),
        event: () => {},
        addLinks: () => {}
      }
      return span
    },
    context: (f) => f()
  })
  return { spans, tracer }
}

describe("Telemetry.instrumentedPorts", () => {
  it.effect("hands out the ports themselves when metrics and traces are off", () =>
    Effect.gen(function* () {
      const plain = yield* Effect.all([FileRepository.FileRepository, RateLimiter.RateLimiter]).pipe(
        Effect.provide(failingPorts)
      )
      const wrapped = yield* Effect.all([FileRepository.FileRepository, RateLimiter.RateLimiter]).pipe(
        Effect.provide(instrumented({ metrics: false, traces: false }))
      )
      expect(wrapped[0]).toBe(plain[0])
      expect(wrapped[1]).toBe(plain[1])
    })
  )

  it.effect("counts storage failures by operation, refusals by scope and limiter failures, with metrics on", () =>
    Effect.gen(function* () {
      const names = [
        "filedata_storage_failures_total",
        "filedata_rate_limit_refusals_total",
        "filedata_rate_limiter_failures_total"
      ]
      const before = names.map(counters)
      const { limiter } = yield* callEvery.pipe(Effect.provide(instrumented({ metrics: true, traces: false })))
      const after = names.map(counters)
      expect(delta(before[0] ?? {}, after[0] ?? {})).toEqual({
        "operation=findAccess": 1,
        "operation=readSubmissions": 1,
        "operation=readChanges": 1,
        "operation=readContentNames": 1,
        "operation=findFile": 1,
        "operation=ping": 1
      })
      // Both scopes' series exist from the start, at 0: the other one is there, unchanged.
      expect(delta(before[1] ?? {}, after[1] ?? {})).toEqual({ "scope=apiKey": 1, "scope=clientAddress": 0 })
      expect(delta(before[2] ?? {}, after[2] ?? {})).toEqual({ "": 1 })
      // What the health check and the rate-limit header fields read is passed through.
      expect(limiter.policy.apiKey.limit).toBe(1)
      expect(yield* limiter.counting ?? Effect.succeed(undefined)).toBe("memory")
    })
  )

  it.effect("makes a span of each call with traces on, inside the caller's span; no key, no address", () =>
    Effect.gen(function* () {
      const { spans, tracer } = recordingTracer()
      yield* callEvery.pipe(
        Effect.withSpan("request"),
        Effect.provide(instrumented({ metrics: false, traces: true })),
        Effect.withTracer(tracer)
      )
      expect(spans.map((span) => span.name)).toEqual([
        "request",
        "FileRepository.findAccess",
        "FileRepository.readSubmissions",
        "FileRepository.readChanges",
        "FileRepository.readContentNames",
        "FileRepository.findFile",
        "FileRepository.ping",
        "RateLimiter.consume",
        "RateLimiter.consume"
      ])
      for (const span of spans.slice(1)) {
        expect(Option.map(span.parent, (parent) => parent._tag === "Span" && parent.name)).toEqual(
          Option.some("request")
        )
      }
      expect(spans.slice(1, 6).map((span) => Object.fromEntries(span.attributes))).toEqual([
        { "filedata.file_id": "file-1" },
        { "filedata.file_id": "file-1" },
        { "filedata.file_id": "file-1" },
        { "filedata.file_id": "file-1" },
        { "filedata.file_id": "file-1" }
      ])
      expect(spans.slice(7).map((span) => span.attributes.get("filedata.rate_limit.scope"))).toEqual([
        "clientAddress",
        "apiKey"
      ])
      const shown = JSON.stringify(spans.map((span) => [span.name, [...span.attributes]]))
      expect(shown).not.toContain(KEY)
      expect(shown).not.toContain("192.0.2.7")
    })
  )
})

describe("Telemetry.instrumentedPorts, a limiter that counts a request in one step", () => {
  // The address admitted once, then refused; the key refused whenever counted.
  let addressCounts = 0
  const count: RateLimiter.RateLimiter["consume"] = (subject) =>
    Effect.suspend(() =>
      subject.scope === "clientAddress" && ++addressCounts <= 1
        ? Effect.succeed({ scope: subject.scope, limit: 1, windowMillis: 1_000, remaining: 0, resetMillis: 900 })
        : Effect.fail(new FileDataError.RateLimited({ scope: subject.scope, limit: 0, retryAfterMillis: 500 }))
    )
  const inOneStep = Layer.succeed(RateLimiter.RateLimiter, {
    policy: { apiKey: { limit: 0, windowMillis: 1_000 }, clientAddress: { limit: 1, windowMillis: 1_000 } },
    consume: count,
    consumeRequest: (address, key) => RateLimiter.consumeRequestInTurn(count, address, key)
  })
  const wrapped = (enabled: Telemetry.Enabled) =>
    Telemetry.instrumentedPorts.pipe(
      Layer.provide(Layer.merge(inOneStep, failingPorts.pipe(Layer.map(Context.omit(RateLimiter.RateLimiter))))),
      Layer.provide(Layer.succeed(Telemetry.Settings, enabled))
    )

  it.effect("keeps it with metrics, counting each refusal it answers by scope", () =>
    Effect.gen(function* () {
      addressCounts = 0
      const limiter = yield* RateLimiter.RateLimiter.pipe(Effect.provide(wrapped({ metrics: true, traces: false })))
      const consumeRequest = limiter.consumeRequest
      expect(consumeRequest).toBeDefined()
      const before = counters("filedata_rate_limit_refusals_total")
      const first = yield* consumeRequest?.("192.0.2.7", apiKey) ?? Effect.dieMessage("no consumeRequest")
      const second = yield* consumeRequest?.("192.0.2.7", apiKey) ?? Effect.dieMessage("no consumeRequest")
      expect([first.clientAddress._tag, first.apiKey?._tag, second.clientAddress._tag, second.apiKey]).toEqual([
        "Right",
        "Left",
        "Left",
        undefined
      ])
      expect(delta(before, counters("filedata_rate_limit_refusals_total"))).toEqual({
        "scope=apiKey": 1,
        "scope=clientAddress": 1
      })
    })
  )

  it.effect("leaves it out with traces, so that each count keeps its span", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter.RateLimiter.pipe(Effect.provide(wrapped({ metrics: true, traces: true })))
      expect(limiter.consumeRequest).toBeUndefined()
    })
  )
})

describe("Telemetry.instrumentedPorts, optional reads", () => {
  it.effect(
    "keeps the port's joined, export and feed pages, each counted as the read it is, and adds none it lacks",
    () =>
      Effect.gen(function* () {
        const withPages = Layer.succeedContext(
          Context.make(FileRepository.FileRepository, {
            findAccess: () => Effect.fail(unavailable),
            readSubmissions: () => Effect.fail(unavailable),
            readChanges: () => Effect.fail(unavailable),
            encodedPages: {
              readJoined: () => Effect.fail(unavailable),
              readExportRows: () => Effect.fail(unavailable),
              readJoinedChanges: () => Effect.fail(unavailable)
            },
            readContentNames: () => Effect.fail(unavailable),
            findFile: () => Effect.fail(unavailable),
            ping: Effect.fail(unavailable)
          }).pipe(
            Context.add(RateLimiter.RateLimiter, Context.get(yield* Layer.build(failingPorts), RateLimiter.RateLimiter))
          )
        )
        const enabled = Layer.succeed(Telemetry.Settings, { metrics: true, traces: false })
        const files = yield* FileRepository.FileRepository.pipe(
          Effect.provide(Telemetry.instrumentedPorts.pipe(Layer.provide(withPages), Layer.provide(enabled)))
        )
        const before = counters("filedata_storage_failures_total")
        yield* Effect.exit(files.encodedPages?.readJoined(fileId, {}, "withId") ?? Effect.void)
        yield* Effect.exit(files.encodedPages?.readExportRows(fileId, {}, { format: "ndjson" }) ?? Effect.void)
        yield* Effect.exit(files.encodedPages?.readJoinedChanges?.(fileId, {}) ?? Effect.void)
        const counted = delta(before, counters("filedata_storage_failures_total"))
        expect([counted["operation=readSubmissions"], counted["operation=readChanges"]]).toEqual([2, 1])
        const plain = yield* FileRepository.FileRepository.pipe(
          Effect.provide(Telemetry.instrumentedPorts.pipe(Layer.provide(failingPorts), Layer.provide(enabled)))
        )
        expect(plain.encodedPages).toBeUndefined()
      }).pipe(Effect.scoped)
  )
})

describe("Telemetry.instrumentedPorts, sampling", () => {
  it.effect("makes no span for the calls of a request whose span is not sampled", () =>
    Effect.gen(function* () {
      const { spans, tracer } = recordingTracer()
      const notSampled = Tracer.externalSpan({ traceId: "trace", spanId: "request", sampled: false })
      yield* callEvery.pipe(
        Effect.withParentSpan(notSampled),
        Effect.provide(instrumented({ metrics: false, traces: true })),
        Effect.withTracer(tracer)
      )
      expect(spans).toEqual([])
    })
  )
})

describe("Logging.announce", () => {
  it.effect("writes one JSON line at once, at info, whatever the minimum level", () =>
    Effect.gen(function* () {
      const written: Array<string> = []
      const base = yield* Effect.console
      const console: Console.Console = {
        ...base,
        log: (...args) => Effect.sync(() => void written.push(args.map(String).join(" ")))
      }
      yield* Logging.announce("listening on http://127.0.0.1:1234 (pid 1)", { extra: 1 }).pipe(
        Effect.withConsole(console),
        Logger.withMinimumLogLevel(LogLevel.None)
      )
      expect(written).toHaveLength(1)
      expect(JSON.parse(written[0] ?? "")).toMatchObject({
        message: "listening on http://127.0.0.1:1234 (pid 1)",
        logLevel: "INFO",
        annotations: { extra: 1 },
        spans: {}
      })
      expect(written[0]).toMatch(/listening on (http:\/\/\S+) /)
    })
  )
})
