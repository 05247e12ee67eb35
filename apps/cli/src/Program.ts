/**
 * What the `filedata` executable runs, apart from the process around it: the command line and the environment
 * are given, and the standard streams, the platform and the console are services. `main.ts` runs it on the
 * process's own; the tests run the same program in-process on text, so only what a process alone shows (signals,
 * exit codes as a shell sees them, stdin, start-up) needs a real one.
 *
 * @since 0.2.0
 */
import { constants } from "node:os"
import type * as CliApp from "@effect/cli/CliApp"
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Environment, Logging, ServiceConfig, Storage } from "@filedata/runtime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import * as CliError from "./CliError.js"
import * as Color from "./Color.js"
import * as Commands from "./Commands.js"
import * as Progress from "./Progress.js"
import * as Stdin from "./Stdin.js"
import * as Stdout from "./Stdout.js"

/**
 * Runs `argv` (with the runtime and script first, as in `process.argv`) with the configuration of the fiber's
 * provider: warns on stderr of the variables of `env` that look misspelled, opens storage once a command
 * runs (so `--help` needs no database), writes log lines through `logging`, and prints any failure, which then
 * ends as `CliError.Reported` with its exit code.
 *
 * @since 0.2.0
 * @category running
 */
export const run = (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  logging: (level: LogLevel.LogLevel) => Layer.Layer<never> = Logging.layer
): Effect.Effect<void, CliError.Reported, CliApp.CliApp.Environment> =>
  Effect.gen(function* () {
    const config = yield* ServiceConfig.config
    // On stderr, as plain text: stdout is the command's output, which scripts read.
    for (const { nearest, variable } of Environment.misspellings(env)) {
      yield* Console.error(
        `warning: ${variable} is not a variable of this service and is ignored: did you mean ${nearest}?`
      )
    }
    const tree = Commands.command.pipe(Command.provide(Storage.layer(config.storage)))
    yield* Commands.run(tree)(argv).pipe(Effect.provide(logging(config.logLevel)))
  }).pipe(CliError.report)

/**
 * The process's platform, console (colourless where no terminal reads it), stdin, stdout and stderr.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerProcess: Layer.Layer<CliApp.CliApp.Environment> = Layer.mergeAll(
  NodeContext.layer,
  Color.layer,
  Progress.layerStderr,
  Stdin.layerProcess,
  Stdout.layerProcess
)

/**
 * The exit code of a run that ended with `exit`: `CliError.exitCode`'s (0, 1 for a failed command, 2 for a
 * wrong command line), or 128 + the signal's number when `signal` stopped it, as a shell reports it, where
 * an interruption alone would end with 0.
 *
 * @since 0.2.0
 * @category running
 */
export const exitCode = (exit: Exit.Exit<unknown, unknown>, signal?: NodeJS.Signals): number =>
  Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) && signal !== undefined
    ? 128 + constants.signals[signal]
    : CliError.exitCode(exit)
