/**
 * Starts the filedata HTTP server with the configuration of the environment.
 *
 * @since 0.1.0
 */

import * as HttpServerError from "@effect/platform/HttpServerError"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { ServiceConfig, StartupFailure } from "@filedata/runtime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Server from "./Server.js"

// Start-up failures end the process with one readable line, not a cause dump.
const describe = (error: unknown, config?: ServiceConfig.ServiceConfig): string =>
  error instanceof HttpServerError.ServeError && config !== undefined
    ? `Cannot start: cannot listen on HOST=${config.host} PORT=${config.port}: ${StartupFailure.causeMessage(error.cause)}`
    : StartupFailure.describe(error)

const main = Effect.gen(function* () {
  const config = yield* Effect.tapError(ServiceConfig.config, (error) => Console.error(describe(error)))
  return yield* Layer.launch(Server.service(config, process.env, () => stopSignal)).pipe(
    Effect.tapError((error) => Console.error(describe(error, config)))
  )
})

// The first SIGTERM or SIGINT starts the drain (runMain). One that follows it must not end the process with
// replies in flight, which Node's default action would: a process manager that signals every process of the
// group, or `pnpm start` passing on the signal it got, sends a second one (docs/operations.md#stopping).
// The first one is named in the log line the drain begins with.
let stopSignal: string | undefined
const drainAlready = (signal: NodeJS.Signals) => {
  stopSignal ??= signal
}
process.on("SIGTERM", drainAlready)
process.on("SIGINT", drainAlready)

NodeRuntime.runMain(main, { disableErrorReporting: true, disablePrettyLogger: true })
