/**
 * Colour only where a person reads it: @effect/cli renders help and its usage errors with ANSI escape codes
 * whatever the output is. They are removed from what goes to a stream that is not a terminal, and from
 * everything when `NO_COLOR` is set to anything but the empty text (https://no-color.org).
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * `NO_COLOR`: set and not empty, no colour anywhere.
 *
 * @since 0.1.0
 * @category config
 */
export const noColor: Config.Config<boolean> = Config.string("NO_COLOR").pipe(
  Config.option,
  Config.map(Option.exists((value) => value !== ""))
)

// CSI sequences (colours, cursor movement, erasing) and OSC sequences (titles, links).
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is what is matched
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g

/**
 * The text without ANSI escape sequences.
 *
 * @since 0.1.0
 * @category formatting
 */
export const strip = (text: string): string => text.replace(ESCAPES, "")

/**
 * Where colour is allowed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Streams {
  readonly stdout: boolean
  readonly stderr: boolean
}

/**
 * `base`, with the escape sequences removed from text written to a stream where colour is not allowed:
 * `log`, `info`, `debug` go to stdout, `error`, `warn`, `trace` to stderr, as with Node's console.
 *
 * @since 0.1.0
 * @category constructors
 */
export const console = (base: Console.Console, colour: Streams): Console.Console => {
  if (colour.stdout && colour.stderr) return base
  const plain = (allowed: boolean) => (args: ReadonlyArray<unknown>) =>
    allowed ? args : args.map((arg) => (typeof arg === "string" ? strip(arg) : arg))
  const out = plain(colour.stdout)
  const err = plain(colour.stderr)
  return {
    ...base,
    log: (...args) => base.log(...out(args)),
    info: (...args) => base.info(...out(args)),
    debug: (...args) => base.debug(...out(args)),
    error: (...args) => base.error(...err(args)),
    warn: (...args) => base.warn(...err(args)),
    trace: (...args) => base.trace(...err(args)),
    unsafe: {
      ...base.unsafe,
      log: (...args) => base.unsafe.log(...out(args)),
      info: (...args) => base.unsafe.info(...out(args)),
      debug: (...args) => base.unsafe.debug(...out(args)),
      error: (...args) => base.unsafe.error(...err(args)),
      warn: (...args) => base.unsafe.warn(...err(args)),
      trace: (...args) => base.unsafe.trace(...err(args))
    }
  }
}

/**
 * Whether colour is allowed on each stream: it is a terminal and `noColor` is not set.
 *
 * @since 0.1.0
 * @category constructors
 */
export const streams = (terminals: Streams, noColor: boolean): Streams => ({
  stdout: terminals.stdout && !noColor,
  stderr: terminals.stderr && !noColor
})

/**
 * The console, colourless on the streams of `terminals` that are not one and everywhere when `NO_COLOR` is set.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerFor = (terminals: Streams): Layer.Layer<never> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      // An unset NO_COLOR cannot fail to read; if the provider fails anyway, the safe side is no colour.
      const off = yield* Effect.orElseSucceed(noColor, () => true)
      const base = yield* Effect.console
      return Console.setConsole(console(base, streams(terminals, off)))
    })
  )

/**
 * The console of the process, colourless where colour is not allowed.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never> = Layer.suspend(() =>
  layerFor({ stdout: process.stdout.isTTY === true, stderr: process.stderr.isTTY === true })
)
