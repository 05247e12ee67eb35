import { describe, expect, it, vi } from "@effect/vitest"
import { Logging } from "@filedata/runtime"
import { Arbitraries } from "@filedata/testing"
import * as Cause from "effect/Cause"
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as List from "effect/List"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as LogSpan from "effect/LogSpan"

const options = (overrides: Partial<Logger.Logger.Options<unknown>>): Logger.Logger.Options<unknown> => ({
  fiberId: FiberId.make(42, 0),
  logLevel: LogLevel.Info,
  message: "request",
  cause: Cause.empty,
  context: FiberRefs.empty(),
  spans: List.empty(),
  annotations: HashMap.empty(),
  date: new Date(Date.UTC(2026, 10, 23, 12, 0, 0, 7)),
  ...overrides
})

const plain = FastCheck.oneof(
  Arbitraries.binaryString(),
  FastCheck.double({ noNaN: true, noDefaultInfinity: true }),
  FastCheck.integer(),
  FastCheck.boolean()
)

describe("Logging.plainLine", () => {
  it.effect("formats the lines Effect.logInfo makes", () =>
    Effect.gen(function* () {
      const made: Array<Logger.Logger.Options<unknown>> = []
      yield* Effect.logInfo("request").pipe(
        Effect.annotateLogs({ method: "POST", status: 200 }),
        Effect.provide(
          Logger.replace(
            Logger.defaultLogger,
            Logger.make((line) => made.push(line))
          )
        )
      )
      expect(made).toHaveLength(1)
      for (const line of made) {
        expect(Logging.plainLine(line)).toBeDefined()
        expect(Logging.plainLine(line)).toEqual(Logger.jsonLogger.log(line))
      }
    })
  )

  it.prop(
    "writes what Logger.jsonLogger writes for plain messages and annotations",
    {
      // As Effect.log* passes it (its arguments as an array), and as a bare value.
      message: FastCheck.oneof(
        Arbitraries.binaryString().map((text) => [text]),
        plain
      ),
      annotations: FastCheck.array(FastCheck.tuple(FastCheck.string(), plain), { maxLength: 8 }),
      spans: FastCheck.array(FastCheck.tuple(FastCheck.string(), FastCheck.nat(10_000)), { maxLength: 3 }),
      millis: FastCheck.integer({ min: 0, max: 253_402_300_799_999 }),
      level: FastCheck.constantFrom(LogLevel.Debug, LogLevel.Info, LogLevel.Warning, LogLevel.Error)
    },
    ({ message, annotations, spans, millis, level }) => {
      const line = options({
        message,
        logLevel: level,
        annotations: HashMap.fromIterable(annotations),
        spans: List.fromIterable(spans.map(([label, age]) => LogSpan.make(label, millis - age))),
        date: new Date(millis)
      })
      expect(Logging.plainLine(line)).toEqual(Logger.jsonLogger.log(line))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("leaves every other line to Logger.jsonLogger", () => {
    const others = [
      options({ message: { nested: true } }),
      options({ message: ["request", "more"] }),
      options({ message: ["request", { status: 200 }, "more"] }),
      options({ message: ["request", { reason: { code: 1 } }] }),
      options({ message: ["request", [200]] }),
      options({ message: [{ status: 200 }, { status: 200 }] }),
      options({ message: [{ nested: true }] }),
      options({ cause: Cause.fail("boom") }),
      options({ annotations: HashMap.make(["reason", { code: 1 }]) }),
      options({ annotations: HashMap.make(["ratio", Number.NaN]) }),
      options({ annotations: HashMap.make(["big", 1n]) })
    ]
    for (const line of others) expect(Logging.plainLine(line)).toBeUndefined()
    // The request line's shape.
    const request = options({
      annotations: HashMap.make(["method", "POST"], ["status", 200], ["requestId", "r-1"])
    })
    expect(JSON.parse(Logging.plainLine(request) ?? "")).toEqual({
      message: "request",
      logLevel: "INFO",
      timestamp: "2026-11-23T12:00:00.007Z",
      annotations: { method: "POST", status: 200, requestId: "r-1" },
      spans: {},
      fiberId: "#42"
    })
  })

  it.effect(
    "writes a request's line (Effect.logInfo(message, fields)) as its message, its fields among the annotations",
    () =>
      Effect.gen(function* () {
        const made: Array<Logger.Logger.Options<unknown>> = []
        yield* Effect.logInfo("request", { fileId: "contact", method: "POST", status: 200 }).pipe(
          Effect.annotateLogs({ requestId: "r-1" }),
          Effect.provide(
            Logger.replace(
              Logger.defaultLogger,
              Logger.make((line) => made.push(line))
            )
          )
        )
        expect(made).toHaveLength(1)
        const line = JSON.parse(Logging.plainLine(made[0] as Logger.Logger.Options<unknown>) ?? "")
        expect(line).toMatchObject({
          message: "request",
          logLevel: "INFO",
          annotations: { requestId: "r-1", fileId: "contact", method: "POST", status: 200 },
          spans: {}
        })
        expect(Object.keys(line)).toEqual(["message", "logLevel", "timestamp", "annotations", "spans", "fiberId"])
      })
  )
})

describe("Logging.infoLine", () => {
  it.prop(
    "writes, byte for byte, what the service's logger writes for Effect.logInfo(message, fields) from no fiber",
    {
      message: Arbitraries.binaryString(),
      fields: FastCheck.dictionary(FastCheck.string(), plain, { maxKeys: 10 }),
      millis: FastCheck.integer({ min: 0, max: 253_402_300_799_999 })
    },
    ({ message, fields, millis }) => {
      const line = options({ message: [message, fields], fiberId: FiberId.none, date: new Date(millis) })
      expect(Logging.infoLine(message, fields, millis)).toBe(Logging.jsonLines.log(line))
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.effect("is the line a fiber writes with Effect.logInfo(message, fields), but for the fiber's id", () =>
    Effect.gen(function* () {
      const made: Array<Logger.Logger.Options<unknown>> = []
      const fields = { fileId: "contact", userId: "alice", method: "POST", status: 200, durationMs: 3 }
      yield* Effect.logInfo("request", fields).pipe(
        Effect.provide(
          Logger.replace(
            Logger.defaultLogger,
            Logger.make((line) => made.push(line))
          )
        )
      )
      const logged = made[0] as Logger.Logger.Options<unknown>
      expect(Logging.infoLine("request", fields, logged.date.getTime())).toBe(
        Logging.jsonLines.log({ ...logged, fiberId: FiberId.none })
      )
    })
  )
})

describe("Logging.ownWriter", () => {
  it.effect("is the service's batch when its logger is the only one, and nothing beside any other logger", () =>
    Effect.gen(function* () {
      const loggers = FiberRef.get(FiberRef.currentLoggers)
      const own = Logging.layer(LogLevel.Info)
      expect(Logging.ownWriter(yield* Effect.provide(loggers, own))).toBeDefined()
      const another = Logger.add(Logger.make(() => {}))
      expect(Logging.ownWriter(yield* Effect.provide(loggers, Layer.merge(own, another)))).toBeUndefined()
      expect(Logging.ownWriter(yield* loggers)).toBeUndefined()
    })
  )
})

describe("Logging.announce", () => {
  it.live("writes the lines waiting for their batch window first, then its own at once", () =>
    Effect.gen(function* () {
      // Both outputs in the order they are written: the batch's writes and the announced line.
      const written: Array<string> = []
      const write = vi.spyOn(process.stdout, "write").mockImplementation((text) => {
        written.push(String(text))
        return true
      })
      const base = yield* Effect.console
      const console: Console.Console = {
        ...base,
        log: (...args) => Effect.sync(() => void written.push(`${args.map(String).join(" ")}\n`))
      }
      yield* Effect.gen(function* () {
        yield* Effect.logWarning("a warning of the start")
        yield* Effect.logInfo("settings")
        yield* Logging.announce("listening on http://127.0.0.1:1234 (pid 1)").pipe(Effect.withConsole(console))
        // At once: before any batch window has passed.
        expect(
          written
            .join("")
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => JSON.parse(line).message)
        ).toEqual(["a warning of the start", "settings", "listening on http://127.0.0.1:1234 (pid 1)"])
      }).pipe(
        Effect.scoped,
        Effect.provide(Logging.layer(LogLevel.Info)),
        Effect.ensuring(Effect.sync(() => write.mockRestore()))
      )
    })
  )
})
