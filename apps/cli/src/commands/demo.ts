/**
 * `demo`: a user with a few files and a fresh key, and a `curl` line to try the API with.
 *
 * @since 0.2.0
 */
import * as Command from "@effect/cli/Command"
import { type FileData, type FileDataError, type Fixture, OperatorStore } from "@filedata/core"
import { ServiceConfig } from "@filedata/runtime"
import type * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as ApiKeyGenerator from "../ApiKeyGenerator.js"
import * as DemoFixture from "../DemoFixture.js"
import { plural } from "./shared.js"

/**
 * What `demo` fails with.
 *
 * @since 0.2.0
 * @category errors
 */
export type Failure =
  | ConfigError.ConfigError
  | FileDataError.StorageUnavailable
  | Fixture.FixtureInvalid
  | OperatorStore.UserNotFound

// A server bound to every interface is reached locally through the loopback address.
const reachableHost = (host: string): string =>
  host === "0.0.0.0" || host === "::" || host === "[::]" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host

const curlLine = (host: string, port: string, apiKey: FileData.ApiKey): string => {
  const body = JSON.stringify({ fileId: DemoFixture.fileId, apiKey: Redacted.value(apiKey) })
  return `curl -sS -X POST http://${reachableHost(host)}:${port}/api/v1/file-data -H 'Content-Type: application/json' -d '${body}'`
}

/**
 * `demo`: the demo data once, a new key on every run.
 *
 * @since 0.2.0
 * @category commands
 */
export const demoCommand = Command.make("demo", {}, () =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const config = yield* ServiceConfig.config
    const apiKey = yield* ApiKeyGenerator.generate
    if (yield* store.userExists(DemoFixture.userId)) {
      const info = yield* store.createKey(DemoFixture.userId, apiKey)
      yield* Console.log(`user ${DemoFixture.userId} already exists; created a new API key for it (id ${info.id})`)
    } else {
      const fixture = yield* DemoFixture.make(apiKey)
      yield* store.importFixture(fixture)
      yield* Console.log(
        `created user ${DemoFixture.userId} with ${plural(fixture.files.length, "file", "files")}: ` +
          fixture.files
            .map((file) => `${file.id} (${plural(file.submissions.length, "submission", "submissions")})`)
            .join(", ")
      )
    }
    yield* Console.log(`API key (shown only now): ${Redacted.value(apiKey)}`)
    // The docs' examples read the key from this variable, so they run as written after `demo`.
    yield* Console.log(`For the examples in README.md and docs/: export FILEDATA_API_KEY=${Redacted.value(apiKey)}`)
    yield* Console.log(
      config.port === 0
        ? "Try it, with the server running and PORT replaced by the port it reports:"
        : "Try it, with the server running (pnpm start):"
    )
    yield* Console.log(curlLine(config.host, config.port === 0 ? "PORT" : String(config.port), apiKey))
  })
).pipe(Command.withDescription("create a demo user with files and print a key and a curl command to try"))
