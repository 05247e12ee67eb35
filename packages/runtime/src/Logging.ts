/**
 * Structured logging: one JSON object per line on stdout, filtered by `LOG_LEVEL`.
 *
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"

/**
 * How long log lines may wait before they are written: lines of the same window go out in one write.
 *
 * @since 0.1.0
 * @category constants
 */
export const batchWindow: Duration.Duration = Duration.millis(50)

// `Logger.json` writes every line with its own `console.log`, a system call each: at the default level that
// is one per request, and measured on the small bench profile it cost more than the request itself. The same
// lines (Effect's `jsonLogger`) are written here once per window instead, and whatever is left when the
// layer closes is written then, so a graceful stop loses nothing; a killed process loses at most one window.
const batchedJson = Logger.batched(Logger.jsonLogger, batchWindow, (lines) => Console.log(lines.join("\n")))

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
