/**
 * Structured logging: one JSON object per line on stdout, filtered by `LOG_LEVEL`.
 *
 * @since 0.1.0
 */
import { FileData } from "@filedata/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as HashMap from "effect/HashMap"
import type * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as List from "effect/List"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type * as Scope from "effect/Scope"

/**
 * How long log lines may wait before they are written: lines of the same window go out in one write.
 *
 * @since 0.1.0
 * @category constants
 */
export const batchWindow: Duration.Duration = Duration.millis(50)

type Plain = string | number | boolean

const isPlain = (value: unknown): value is Plain =>
  typeof value === "string" || (typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean"

const isPlainRecord = (value: unknown): value is Readonly<Record<string, Plain>> => {
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false
  for (const key in value) if (!isPlain((value as Record<string, unknown>)[key])) return false
  return true
}

/**
 * The line `Logger.jsonLogger` writes, same fields in the same order, for a line whose message and annotation
 * values are plain strings, finite numbers or booleans and which has no cause; `undefined` for any other line.
 * A request's line (`Effect.logInfo(message, fields)`: a message and a record of plain fields) is written in
 * the same shape, the record's fields after the annotations. `jsonLogger` passes each value through a replacer
 * (cycles, redaction) and formats the time with `toISOString`: measured, that was most of a request line's cost
 * at the default level, and none of it applies to plain values.
 *
 * @since 0.1.0
 * @category formatting
 */
export const plainLine = (options: Logger.Logger.Options<unknown>): string | undefined => {
  const { annotations, spans, date } = options
  // `Effect.log*` passes its arguments as an array; one argument is written as the message itself.
  const parts: ReadonlyArray<unknown> = Array.isArray(options.message) ? options.message : [options.message]
  const [message, requestFields] = parts
  if (
    !isPlain(message) ||
    parts.length > 2 ||
    (parts.length === 2 && !isPlainRecord(requestFields)) ||
    !Cause.isEmpty(options.cause)
  ) {
    return undefined
  }
  const fields: Record<string, Plain> = {}
  for (const [key, value] of annotations) {
    if (!isPlain(value)) return undefined
    fields[key] = value
  }
  if (requestFields !== undefined) Object.assign(fields, requestFields)
  const now = date.getTime()
  const spanFields: Record<string, number> = {}
  for (const span of spans) spanFields[span.label] = now - span.startTime
  return format(message, options.logLevel.label, now, fields, spanFields, FiberId.threadName(options.fiberId))
}

const format = (
  message: Plain,
  level: string,
  now: number,
  fields: Readonly<Record<string, Plain>>,
  spans: Readonly<Record<string, number>>,
  fiberId: string
): string =>
  JSON.stringify({
    message,
    logLevel: level,
    timestamp: FileData.timestampFromEpochMillis(now),
    annotations: fields,
    spans,
    fiberId
  })

const noSpans = {}
const noFiber = FiberId.threadName(FiberId.none)

/**
 * The line {@link jsonLines} writes for `Effect.logInfo(message, fields)` at `now` from no fiber (`FiberId.none`),
 * with no annotations or spans: for a request answered without a fiber (`FileDataRoute`).
 *
 * @since 0.2.0
 * @category formatting
 */
export const infoLine = (message: string, fields: Readonly<Record<string, Plain>>, now: number): string =>
  // Copied as `plainLine` copies them, so that even a `__proto__` key is written alike.
  format(message, "INFO", now, Object.assign({}, fields), noSpans, noFiber)

/**
 * The service's line for any log call, as `Logger.jsonLogger` writes it: {@link plainLine}, else
 * `Logger.jsonLogger`'s own.
 *
 * @since 0.1.0
 * @category loggers
 */
export const jsonLines: Logger.Logger<unknown, string> = Logger.make(
  (options) => plainLine(options) ?? Logger.jsonLogger.log(options)
)

/**
 * Writes one `info` line at once, whatever `LOG_LEVEL` says, after the lines waiting for their batch window
 * (written first, so the log stays in time order: the start's warnings and settings before `listening on`): for
 * what an operator or a supervisor waits for, such as the `listening on` line of the contract. The line has the
 * shape of every other line ({@link plainLine}).
 *
 * @since 0.1.0
 * @category logging
 */
export const announce = (
  message: string,
  annotations: Readonly<Record<string, string | number | boolean>> = {}
): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      for (const flush of waiting) flush()
      const options: Logger.Logger.Options<unknown> = {
        fiberId: fiber.id(),
        logLevel: LogLevel.Info,
        message,
        cause: Cause.empty,
        context: fiber.getFiberRefs(),
        spans: List.empty(),
        annotations: HashMap.fromIterable(Object.entries(annotations)),
        date: new Date(now)
      }
      return Console.log(jsonLines.log(options))
    })
  )

// `Logger.json` writes every line with its own `console.log`, a system call each: at the default level that
// is one per request, and measured on the small bench profile it cost more than the request itself. The same
// lines (Effect's `jsonLogger`) are written here once per window instead, and whatever is left when the
// layer closes is written then, so a graceful stop loses nothing; a killed process loses at most one window.
const makeBatch = () => {
  let lines: Array<string> = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    timer = undefined
    const text = lines.join("\n")
    lines = []
    process.stdout.write(`${text}\n`)
  }
  return {
    push: (line: string): void => {
      lines.push(line)
      timer ??= setTimeout(flush, Duration.toMillis(batchWindow))
    },
    close: (): void => {
      if (timer === undefined) return
      clearTimeout(timer)
      flush()
    }
  }
}

const batches = new WeakMap<Logger.Logger<unknown, unknown>, (line: string) => void>()
// Each open batch's writing of its waiting lines, for `announce`.
const waiting = new Set<() => void>()

// The batch is the service's own so that a line written without a fiber joins the same stream in order.
const batchedJson: Effect.Effect<Logger.Logger<unknown, void>, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => {
      const batch = makeBatch()
      waiting.add(batch.close)
      return batch
    }),
    (batch) =>
      Effect.sync(() => {
        waiting.delete(batch.close)
        batch.close()
      })
  ),
  (batch) => {
    const logger = Logger.make<unknown, void>((options) => batch.push(jsonLines.log(options)))
    batches.set(logger, batch.push)
    return logger
  }
)

/**
 * The batched writer of {@link layer}'s logger when it is the only logger in `loggers` (the fiber's
 * `FiberRef.currentLoggers`) besides Effect's `Logger.tracerLogger` (which writes only into spans), so a line
 * from {@link infoLine} goes where that logger's lines go; `undefined` when any other logger is installed,
 * whose lines only Effect's `Logger` can give it.
 *
 * @since 0.2.0
 * @category writing
 */
export const ownWriter = (
  loggers: HashSet.HashSet<Logger.Logger<unknown, unknown>>
): ((line: string) => void) | undefined => {
  let writer: ((line: string) => void) | undefined
  for (const logger of loggers) {
    if (logger === Logger.tracerLogger) continue
    const own = batches.get(logger)
    if (own === undefined || writer !== undefined) return undefined
    writer = own
  }
  return writer
}

// When whatever reads stdout goes away (a log shipper restarting, `| head`), the next write fails with EPIPE,
// emitted as an `error` event nobody listens to: the process would crash over a log line. The lines are
// lost instead; the service goes on.
const ignore = () => {}
const outputErrorsIgnored = Layer.scopedDiscard(
  Effect.acquireRelease(
    Effect.sync(() => process.stdout.on("error", ignore)),
    () => Effect.sync(() => process.stdout.off("error", ignore))
  )
)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (level: LogLevel.LogLevel): Layer.Layer<never> =>
  Layer.mergeAll(
    Logger.replaceScoped(Logger.defaultLogger, batchedJson),
    Logger.minimumLogLevel(level),
    outputErrorsIgnored
  )
