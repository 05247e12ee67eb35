/**
 * The `filedata` executable: reads the configuration, wires storage and logging to the command tree, runs it.
 *
 * @since 0.1.0
 */
import { constants } from "node:os"
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Environment, Logging, ServiceConfig, Storage } from "@filedata/runtime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as CliError from "./CliError.js"
import * as Color from "./Color.js"
import * as Commands from "./Commands.js"
import * as Progress from "./Progress.js"
import * as Stdin from "./Stdin.js"
import * as Stdout from "./Stdout.js"

const main = Effect.gen(function* () {
  const config = yield* ServiceConfig.config
  // On stderr, as plain text: stdout is the command's output, which scripts read.
  for (const { nearest, variable } of Environment.misspellings(process.env)) {
    yield* Console.error(
      `warning: ${variable} is not a variable of this service and is ignored: did you mean ${nearest}?`
    )
  }
  // Provided to the tree, storage is opened only once a command runs, so `--help` needs no database.
  const tree = Commands.command.pipe(Command.provide(Storage.layer(config.storage)))
  yield* Commands.run(tree)(process.argv).pipe(
    Effect.provide(
      Layer.mergeAll(Logging.layer(config.logLevel), Progress.layerStderr, Stdin.layerProcess, Stdout.layerProcess)
    )
  )
}).pipe(CliError.report, Effect.provide(Layer.merge(NodeContext.layer, Color.layer)))

// SIGTERM or SIGINT interrupts the command, and an import's transaction rolls back: the exit code then says the
// command did not finish (128 + the signal's number, as a shell reports it), where runMain would exit 0.
let stoppedBy: NodeJS.Signals | undefined
const noteSignal = (signal: NodeJS.Signals) => {
  stoppedBy ??= signal
}
process.once("SIGTERM", noteSignal)
process.once("SIGINT", noteSignal)

// Every failure has been printed by `CliError.report`; what is left is its exit code (2 for a wrong command
// line, 1 for a failed command, 128 + the signal's number for one a signal stopped). runMain's pretty logger
// would print each log line a second time next to the JSON logger of `Logging.layer`.
NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) =>
    onExit(
      Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) && stoppedBy !== undefined
        ? 128 + constants.signals[stoppedBy]
        : CliError.exitCode(exit)
    )
})
