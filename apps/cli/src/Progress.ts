/**
 * Progress of an import or an append on a terminal: one line on stderr, rewritten in place a few times a
 * second and cleared at the end. When stderr is not a terminal nothing is written, so output that scripts and
 * tests read stays as it was. The line is redrawn with a carriage return and spaces, no escape sequence, so it
 * needs no colour support and heeds `NO_COLOR` by having nothing to turn off.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Where progress goes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Terminal {
  /** Whether a person watches: only then is progress shown. */
  readonly isTTY: boolean
  readonly write: (text: string) => Effect.Effect<void>
}

/**
 * The terminal progress goes to; none unless given, so the command tree runs anywhere without one.
 *
 * @since 0.1.0
 * @category tags
 */
export class ProgressTerminal extends Context.Reference<ProgressTerminal>()("@filedata/cli/Progress/ProgressTerminal", {
  defaultValue: (): Terminal => ({ isTTY: false, write: () => Effect.void })
}) {}

/**
 * The process's stderr, shown on when it is a terminal.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStderr: Layer.Layer<never> = Layer.sync(ProgressTerminal, () => ({
  isTTY: process.stderr.isTTY === true,
  write: (text) => Effect.sync(() => void process.stderr.write(text))
}))

/**
 * Least time between two renderings of the line.
 *
 * @since 0.1.0
 * @category constants
 */
export const intervalMillis = 250

/**
 * What an import or an append reports as it goes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Meter {
  /** Bytes of the file read so far, added to the count. */
  readonly read: (bytes: number) => Effect.Effect<void>
  /** Submissions read so far, added to the count. */
  readonly submissions: (count: number) => Effect.Effect<void>
}

const MIB = 1024 * 1024

const formatMiB = (bytes: number): string => (bytes / MIB).toFixed(1)

/**
 * The progress line: what is being done, bytes read of the total (of a pipe, whose total is unknown, the bytes
 * read), and submissions so far.
 *
 * @since 0.1.0
 * @category rendering
 */
export const line = (read: number, total: number | undefined, submissions: number, verb = "importing"): string => {
  const count = `${submissions.toLocaleString("en-US")} submissions`
  if (total === undefined) return `${verb}: ${formatMiB(read)} MiB read, ${count}`
  const percent = total === 0 ? 100 : Math.floor((100 * read) / total)
  return `${verb}: ${formatMiB(read)} of ${formatMiB(total)} MiB read (${percent}%), ${count}`
}

/**
 * What redraws the progress line over one of `shown` characters: a carriage return, the text, and spaces over
 * whatever the earlier line had beyond it.
 *
 * @since 0.1.0
 * @category rendering
 */
export const redraw = (text: string, shown: number): string => `\r${text.padEnd(shown)}`

/**
 * What clears a progress line of `shown` characters and puts the cursor back at its start.
 *
 * @since 0.1.0
 * @category rendering
 */
export const clear = (shown: number): string => `\r${" ".repeat(shown)}\r`

/**
 * Runs `use` with a meter of a file of `totalBytes` (`undefined` for a pipe); on a terminal the line (saying
 * `verb`) is shown as the meter moves and cleared when `use` ends, however it ends, so what is printed next
 * starts on a clean line.
 *
 * @since 0.1.0
 * @category combinators
 */
export const track = <A, E, R>(
  totalBytes: number | undefined,
  use: (meter: Meter) => Effect.Effect<A, E, R>,
  verb = "importing"
): Effect.Effect<A, E, R> =>
  Effect.flatMap(ProgressTerminal, (terminal) => {
    if (!terminal.isTTY) return use({ read: () => Effect.void, submissions: () => Effect.void })
    let read = 0
    let submissions = 0
    let shownAt = Number.NEGATIVE_INFINITY
    let shown = 0
    const render = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (now - shownAt < intervalMillis) return Effect.void
      shownAt = now
      const text = line(read, totalBytes, submissions, verb)
      const output = redraw(text, shown)
      shown = Math.max(shown, text.length)
      return terminal.write(output)
    })
    const meter: Meter = {
      read: (bytes) =>
        Effect.suspend(() => {
          read += bytes
          return render
        }),
      submissions: (count) =>
        Effect.sync(() => {
          submissions += count
        })
    }
    const cleared = Effect.suspend(() => (shown === 0 ? Effect.void : terminal.write(clear(shown))))
    return Effect.ensuring(use(meter), cleared)
  })

/**
 * What an export reports as it goes.
 *
 * @since 0.2.0
 * @category models
 */
export interface OutputMeter {
  /** Bytes written so far, added to the count. */
  readonly written: (bytes: number) => Effect.Effect<void>
}

/**
 * The progress line of an export: bytes written so far.
 *
 * @since 0.2.0
 * @category rendering
 */
export const writtenLine = (written: number, verb = "exporting"): string => `${verb}: ${formatMiB(written)} MiB written`

/**
 * Runs `use` with a meter of what it writes; on a terminal the line (saying `verb`) is shown as the meter moves
 * and cleared when `use` ends, as {@link track} does.
 *
 * @since 0.2.0
 * @category combinators
 */
export const trackWritten = <A, E, R>(
  use: (meter: OutputMeter) => Effect.Effect<A, E, R>,
  verb = "exporting"
): Effect.Effect<A, E, R> =>
  Effect.flatMap(ProgressTerminal, (terminal) => {
    if (!terminal.isTTY) return use({ written: () => Effect.void })
    let written = 0
    let shownAt = Number.NEGATIVE_INFINITY
    let shown = 0
    const meter: OutputMeter = {
      written: (bytes) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          written += bytes
          if (now - shownAt < intervalMillis) return Effect.void
          shownAt = now
          const text = writtenLine(written, verb)
          const output = redraw(text, shown)
          shown = Math.max(shown, text.length)
          return terminal.write(output)
        })
    }
    const cleared = Effect.suspend(() => (shown === 0 ? Effect.void : terminal.write(clear(shown))))
    return Effect.ensuring(use(meter), cleared)
  })
