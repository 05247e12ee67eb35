/**
 * `key create|revoke|list|find`: an API key is printed once, at its creation; afterwards only its id and prefix.
 *
 * @since 0.2.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { FileData, type FileDataError, OperatorStore, TextRules } from "@filedata/core"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ApiKeyGenerator from "../ApiKeyGenerator.js"
import * as CliError from "../CliError.js"
import * as Stdin from "../Stdin.js"
import { named, table } from "./shared.js"

/**
 * What `key` commands fail with.
 *
 * @since 0.2.0
 * @category errors
 */
export type Failure =
  | FileDataError.StorageUnavailable
  | OperatorStore.UserNotFound
  | OperatorStore.KeyNotFound
  | CliError.NoMatchingKey
  | CliError.UsageError

const userOption = Options.text("user").pipe(
  Options.mapEffect(named("--user", FileData.UserId)),
  Options.withDescription("user id")
)

const createKeyCommand = Command.make("create", { user: userOption }, ({ user }) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const apiKey = yield* ApiKeyGenerator.generate
    const info = yield* store.createKey(user, apiKey)
    yield* Console.log(`created API key ${info.id} for user ${info.userId}`)
    yield* Console.log(`API key: ${Redacted.value(apiKey)}`)
    yield* Console.log("Store it now: only its hash is kept, so it cannot be shown again.")
  })
).pipe(Command.withDescription("generate a new API key for a user and print it once"))

const revokeKeyCommand = Command.make("revoke", { id: Args.text({ name: "ID" }) }, ({ id }) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const info = yield* store.revokeKey(id)
    const revokedAt = Option.getOrElse(info.revokedAt, () => "now")
    yield* Console.log(`revoked API key ${info.id} of user ${info.userId} (at ${revokedAt})`)
  })
).pipe(Command.withDescription("revoke an API key by its id; it stops working at once"))

const keyRows = (keys: ReadonlyArray<OperatorStore.ApiKeyInfo>): ReadonlyArray<string> =>
  table([
    ["ID", "PREFIX", "USER", "CREATED", "REVOKED"],
    ...keys.map((key) => [
      key.id,
      Option.getOrElse(key.prefix, () => "-"),
      key.userId,
      key.createdAt,
      Option.getOrElse(key.revokedAt, () => "-")
    ])
  ])

const listKeysCommand = Command.make(
  "list",
  { user: userOption.pipe(Options.withDescription("only this user's keys"), Options.optional) },
  ({ user }) =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      if (Option.isSome(user) && !(yield* store.userExists(user.value))) {
        return yield* new OperatorStore.UserNotFound({ userId: user.value })
      }
      const keys = yield* store.listKeys(user)
      if (keys.length === 0) {
        return yield* Console.log("no API keys")
      }
      yield* Effect.forEach(keyRows(keys), (row) => Console.log(row))
    })
).pipe(
  Command.withDescription(
    "list API keys: ids, the first characters of keys of 32 or more (- for others), owners and dates"
  )
)

const findKeyCommand = Command.make("find", {}, () =>
  Effect.gen(function* () {
    const input = yield* Stdin.StandardInput
    if (input.isTTY) yield* Console.error("Paste the API key and press Enter:")
    const text = yield* input.readLine
    if (Option.isNone(text) || text.value === "") {
      return yield* new CliError.UsageError({
        detail: "key find reads the API key from stdin, e.g. filedata key find < leaked-key.txt"
      })
    }
    // Text against the text rules (U+0000 read from a file) was never accepted as a key, so none matches it.
    if (!TextRules.isNonEmptyText(text.value)) return yield* new CliError.NoMatchingKey()
    const store = yield* OperatorStore.OperatorStore
    const found = yield* store.findKey(Redacted.make(FileData.ApiKeyText.make(text.value)))
    if (Option.isNone(found)) return yield* new CliError.NoMatchingKey()
    yield* Effect.forEach(keyRows([found.value]), (row) => Console.log(row))
  })
).pipe(
  Command.withDescription(
    "read an API key from stdin and print its id, owner and state, so a leaked key can be revoked"
  )
)

/**
 * `key create --user ID`, `key revoke ID`, `key list [--user ID]` and `key find` (the key on stdin).
 *
 * @since 0.2.0
 * @category commands
 */
export const keyCommand = Command.make("key").pipe(
  Command.withDescription("manage API keys"),
  Command.withSubcommands([createKeyCommand, revokeKeyCommand, listKeysCommand, findKeyCommand])
)
