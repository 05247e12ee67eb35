/**
 * The `filedata` executable: `Program.run` on the process's command line, environment and streams.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Program from "./Program.js"

// SIGTERM or SIGINT interrupts the command, and an import's transaction rolls back: the exit code then says the
// command did not finish (128 + the signal's number, as a shell reports it), where runMain would exit 0.
let stoppedBy: NodeJS.Signals | undefined
const noteSignal = (signal: NodeJS.Signals) => {
  stoppedBy ??= signal
}
process.once("SIGTERM", noteSignal)
process.once("SIGINT", noteSignal)

// Every failure has been printed by `Program.run`; what is left is its exit code. runMain's pretty logger
// would print each log line a second time next to the JSON logger of `Logging.layer`.
NodeRuntime.runMain(Effect.provide(Program.run(process.argv, process.env), Program.layerProcess), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) => onExit(Program.exitCode(exit, stoppedBy))
})
