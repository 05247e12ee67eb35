/**
 * `demo`: a user with a few files and a fresh key, and a `curl` line to try the API with.
 *
 * @since 0.2.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
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
const everyInterface = (host: string): boolean => host === "0.0.0.0" || host === "::" || host === "[::]"

const reachableHost = (host: string): string =>
  everyInterface(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host

/**
 * The server's address as `demo` prints it for the examples, from `HOST` and `PORT`: the loopback address for a
 * server on every interface, the word PORT for `PORT=0` (the server reports the port it picked).
 *
 * @since 0.2.0
 * @category formatting
 */
export const serverUrl = (host: string, port: number): string =>
  `http://${reachableHost(host)}:${port === 0 ? "PORT" : String(port)}`

const curlLine = (url: string, apiKey: FileData.ApiKey): string => {
  const body = JSON.stringify({ fileId: DemoFixture.fileId, apiKey: Redacted.value(apiKey) })
  return `curl -sS -X POST ${url}/api/v1/file-data -H 'Content-Type: application/json' -d '${body}'`
}

/**
 * `demo [--reset]`: the demo data once, or anew with `--reset`, and a new key on every run.
 *
 * @since 0.2.0
 * @category commands
 */
export const demoCommand = Command.make(
  "demo",
  {
    reset: Options.boolean("reset").pipe(
      Options.withDescription(
        "remove the demo user with its keys, files, submissions and webhooks first, so the files are as the docs show them"
      )
    )
  },
  ({ reset }) =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const config = yield* ServiceConfig.config
      const apiKey = yield* ApiKeyGenerator.generate
      if (reset && (yield* store.userExists(DemoFixture.userId))) {
        const removed = yield* store.removeUser(DemoFixture.userId)
        yield* Console.log(
          `removed user ${DemoFixture.userId} with ${plural(removed.apiKeys, "API key", "API keys")}, ` +
            `${plural(removed.files, "file", "files")}, ${plural(removed.submissions, "submission", "submissions")} ` +
            `and ${plural(removed.webhooks, "webhook", "webhooks")}`
        )
      }
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
      const url = serverUrl(config.host, config.port)
      yield* Console.log(`API key (shown only now): ${Redacted.value(apiKey)}`)
      // The docs' examples read the server's address and the key from these variables, so they run as written.
      yield* Console.log("For the examples in README.md and docs/, run these two lines where you try them:")
      yield* Console.log(`export FILEDATA_URL=${url}`)
      yield* Console.log(`export FILEDATA_API_KEY=${Redacted.value(apiKey)}`)
      yield* Console.log(
        config.port === 0
          ? "Try it, with the server running and PORT replaced by the port it reports:"
          : "Try it, with the server running (pnpm start):"
      )
      yield* Console.log(curlLine(url, apiKey))
      if (everyInterface(config.host)) {
        yield* Console.log(
          `Note: HOST=${config.host} serves on every interface, so anyone who reaches this machine can read the ` +
            "demo's files with this key. For a trial on a shared machine: HOST=127.0.0.1 pnpm start"
        )
      }
    })
).pipe(Command.withDescription("create a demo user with files and print a key and a curl command to try"))
