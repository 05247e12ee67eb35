/**
 * Starts the filedata HTTP server with the configuration of the environment.
 *
 * @since 0.1.0
 */

import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Logging, RateLimiting, ServiceConfig, Storage } from "@filedata/runtime"
import * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Server from "./Server.js"

// Start-up failures end the process with one readable line, not a cause dump.
const describe = (error: unknown): string => {
  if (ConfigError.isConfigError(error)) return ServiceConfig.formatError(error)
  const tagged = error as { readonly _tag?: string; readonly cause?: unknown; readonly message?: string }
  const cause = tagged.cause instanceof Error ? `: ${tagged.cause.message}` : ""
  return tagged._tag === "ServeError"
    ? `Cannot listen${cause}`
    : `Cannot start: ${tagged.message ?? String(error)}${cause}`
}

const main = Effect.gen(function* () {
  const config = yield* ServiceConfig.config
  return yield* Layer.launch(
    Server.layer(config).pipe(
      Layer.provide([Storage.layer(config.storage), RateLimiting.layer(config.rateLimiting)]),
      Layer.provide(Logging.layer(config.logLevel))
    )
  )
}).pipe(Effect.tapError((error) => Console.error(describe(error))))

NodeRuntime.runMain(main, { disableErrorReporting: true, disablePrettyLogger: true })
