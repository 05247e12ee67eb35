/**
 * The first line of standard input, for a command that takes a secret there rather than on the command
 * line, where it would stay in the shell's history and in the process list.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * Where a command reads its input.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  /** Whether a person types it: a command may then say what it waits for. */
  readonly isTTY: boolean
  /** The first line, without its line break; none when the input ends before any character. */
  readonly readLine: Effect.Effect<Option.Option<string>>
}

/**
 * The input commands read; empty unless given, so the command tree runs anywhere without one.
 *
 * @since 0.1.0
 * @category tags
 */
export class StandardInput extends Context.Reference<StandardInput>()("@filedata/cli/Stdin/StandardInput", {
  defaultValue: (): Input => ({ isTTY: false, readLine: Effect.succeed(Option.none()) })
}) {}

/**
 * The longest line read; an API key is far shorter, and a file piped in by mistake is not read whole.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxLineLength = 64 * 1024

/**
 * The first line of `text`, without `\n` or `\r\n`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const firstLine = (text: string): string => {
  const end = text.indexOf("\n")
  const line = end === -1 ? text : text.slice(0, end)
  return line.endsWith("\r") ? line.slice(0, -1) : line
}

/**
 * The process's stdin, read up to its first line break, then closed.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerProcess: Layer.Layer<never> = Layer.sync(StandardInput, () => ({
  isTTY: process.stdin.isTTY === true,
  readLine: Effect.async<Option.Option<string>>((resume) => {
    const stdin = process.stdin
    let text = ""
    const done = () => {
      stdin.off("data", onData)
      stdin.off("end", done)
      stdin.off("error", done)
      // Nothing more is read; a stdin left open would keep the process alive.
      stdin.destroy()
      resume(Effect.succeed(text === "" ? Option.none() : Option.some(firstLine(text))))
    }
    const onData = (chunk: string) => {
      text += chunk
      if (text.includes("\n") || text.length >= maxLineLength) done()
    }
    stdin.setEncoding("utf8")
    stdin.on("data", onData)
    stdin.once("end", done)
    stdin.once("error", done)
    return Effect.sync(() => {
      stdin.off("data", onData)
      stdin.off("end", done)
      stdin.off("error", done)
      stdin.destroy()
    })
  })
}))
