/**
 * `user create|list`.
 *
 * @since 0.2.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import { FileData, type FileDataError, OperatorStore } from "@filedata/core"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { refusal, table } from "./shared.js"

/**
 * What `user` commands fail with.
 *
 * @since 0.2.0
 * @category errors
 */
export type Failure = FileDataError.StorageUnavailable | OperatorStore.UserExists

const createUserCommand = Command.make(
  "create",
  {
    id: Args.text({ name: "ID" }).pipe(
      Args.mapEffect(refusal("ID", FileData.UserId)),
      Args.withDescription("the new user's id, under a fixture's text rules: at most 256 characters")
    )
  },
  ({ id }) =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      yield* store.createUser(id)
      yield* Console.log(`created user ${id}; give it a key with: filedata key create --user ${id}`)
    })
).pipe(Command.withDescription("create a user with no keys and no files"))

const listUsersCommand = Command.make("list", {}, () =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const users = yield* store.listUsers
    if (users.length === 0) {
      return yield* Console.log("no users")
    }
    const rows = table([
      ["ID", "KEYS", "FILES"],
      ...users.map((user) => [user.id, String(user.activeKeys), String(user.files)])
    ])
    yield* Effect.forEach(rows, (row) => Console.log(row))
  })
).pipe(Command.withDescription("list users by id, with their active (not revoked) API keys and their files"))

/**
 * `user create ID` and `user list`.
 *
 * @since 0.2.0
 * @category commands
 */
export const userCommand = Command.make("user").pipe(
  Command.withDescription("manage users"),
  Command.withSubcommands([createUserCommand, listUsersCommand])
)
