// The users and keys of the `OperatorStore` port (`SqlOperatorStore`): created under the write lock, listed and
// found by SqlSchema queries whose rows decode to the port's models.
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { ApiKeyPrefix, type FileData, type FileDataError, OperatorStore } from "@filedata/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { hashKey } from "../KeyHash.js"
import type * as SqlDialect from "../SqlDialect.js"
import { unavailable } from "../StorageFailure.js"
import * as Rows from "./rows.js"

const KEY_ID = /^[1-9]\d{0,15}$/

/**
 * What the accounts need of the store around them: the ids of a table that exist, and its transactions.
 *
 * @internal
 */
export interface Store {
  readonly existing: (
    table: "users",
    column: "id",
    values: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlySet<string>, SqlError>
  readonly transaction: <A, E, R>(
    effect: Effect.Effect<A, E | SqlError, R>
  ) => Effect.Effect<A, Exclude<E, SqlError> | FileDataError.StorageUnavailable, R>
}

/**
 * The members of the port that manage users and keys.
 *
 * @internal
 */
export const make = (
  sql: SqlClient.SqlClient,
  dialect: SqlDialect.SqlDialect,
  { existing, transaction }: Store
): Pick<
  OperatorStore.OperatorStore,
  "createKey" | "revokeKey" | "listKeys" | "findKey" | "createUser" | "listUsers" | "userExists" | "removeUser"
> => {
  const { instant, epochMillis, int8, writeLock } = dialect
  // Reads outside a transaction: every SQL failure is the port's, a row that does not decode a defect.
  const read = <A, R>(
    effect: Effect.Effect<A, SqlError | Rows.RowFailure, R>
  ): Effect.Effect<A, FileDataError.StorageUnavailable, R> => Effect.mapError(Rows.orDieOnRow(effect), unavailable)

  const keyColumns = sql`id, user_id, key_prefix, ${epochMillis("created_at")} AS created_at,
    ${epochMillis("revoked_at")} AS revoked_at`

  const insertKey = SqlSchema.single({
    Request: Schema.Struct({
      userId: Schema.String,
      keyHash: Schema.String,
      prefix: Schema.NullOr(Schema.String),
      now: Schema.Number
    }),
    Result: Rows.KeyRow,
    execute: ({ userId, keyHash, prefix, now }) =>
      sql`INSERT INTO api_keys (user_id, key_hash, key_prefix, created_at)
        VALUES (${userId}, ${keyHash}, ${prefix}, ${instant(now)}) RETURNING ${keyColumns}`
  })
  // One statement, atomic alone. COALESCE keeps the first revocation time when a key is revoked again.
  const revoke = SqlSchema.findOne({
    Request: Schema.Struct({ keyId: Schema.String, now: Schema.Number }),
    Result: Rows.KeyRow,
    execute: ({ keyId, now }) => sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${instant(now)})
      WHERE id = ${int8(keyId)} RETURNING ${keyColumns}`
  })
  const keys = SqlSchema.findAll({
    Request: Schema.OptionFromSelf(Schema.String),
    Result: Rows.KeyRow,
    execute: (userId) =>
      Option.match(userId, {
        onNone: () => sql`SELECT ${keyColumns} FROM api_keys ORDER BY id`,
        onSome: (id) => sql`SELECT ${keyColumns} FROM api_keys WHERE user_id = ${id} ORDER BY id`
      })
  })
  const keyByHash = SqlSchema.findOne({
    Request: Schema.String,
    Result: Rows.KeyRow,
    execute: (keyHash) => sql`SELECT ${keyColumns} FROM api_keys WHERE key_hash = ${keyHash}`
  })
  // Each count is one grouped pass over its table, not a lookup per user: files has no index by user.
  const users = SqlSchema.findAll({
    Request: Schema.Void,
    Result: Rows.UserRow,
    execute: () => sql`SELECT u.id AS id, COALESCE(k.n, 0) AS active_keys, COALESCE(f.n, 0) AS files
      FROM users AS u
      LEFT JOIN (SELECT user_id, COUNT(*) AS n FROM api_keys WHERE revoked_at IS NULL GROUP BY user_id) AS k
        ON k.user_id = u.id
      LEFT JOIN (SELECT user_id, COUNT(*) AS n FROM files GROUP BY user_id) AS f ON f.user_id = u.id
      ORDER BY u.id`
  })

  // What a user's removal takes, counted in one statement before it is deleted.
  const owned = SqlSchema.single({
    Request: Schema.String,
    Result: Schema.Struct({ api_keys: Rows.Int, files: Rows.Int, submissions: Rows.Int, webhooks: Rows.Int }),
    execute: (userId) => sql`SELECT
      (SELECT COUNT(*) FROM api_keys WHERE user_id = ${userId}) AS api_keys,
      (SELECT COUNT(*) FROM files WHERE user_id = ${userId}) AS files,
      (SELECT COUNT(*) FROM submissions WHERE file_id IN (SELECT id FROM files WHERE user_id = ${userId})) AS submissions,
      (SELECT COUNT(*) FROM webhooks WHERE file_id IN (SELECT id FROM files WHERE user_id = ${userId})) AS webhooks`
  })

  // `body` in one transaction under the write lock, once the user is known to exist.
  const ofUser = <A>(
    userId: FileData.UserId,
    body: Effect.Effect<A, SqlError | Rows.RowFailure>
  ): Effect.Effect<A, OperatorStore.UserNotFound | FileDataError.StorageUnavailable> =>
    Rows.orDieOnRow(
      transaction(
        Effect.gen(function* () {
          yield* writeLock
          const found = yield* existing("users", "id", [userId])
          if (!found.has(userId)) return yield* new OperatorStore.UserNotFound({ userId })
          return yield* body
        })
      )
    )

  return {
    createKey: (userId, apiKey) =>
      ofUser(
        userId,
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          insertKey({
            userId,
            keyHash: hashKey(apiKey),
            prefix: Option.getOrNull(ApiKeyPrefix.fromText(Redacted.value(apiKey))),
            now
          })
        )
      ),

    revokeKey: (keyId) =>
      Effect.gen(function* () {
        const notFound = new OperatorStore.KeyNotFound({ keyId })
        if (!KEY_ID.test(keyId)) return yield* notFound
        const row = yield* read(revoke({ keyId, now: yield* Clock.currentTimeMillis }))
        return yield* Option.match(row, { onNone: () => Effect.fail(notFound), onSome: Effect.succeed })
      }),

    listKeys: (userId) => read(keys(userId)),

    findKey: (apiKey) => read(keyByHash(hashKey(apiKey))),

    createUser: (userId) =>
      transaction(
        Effect.gen(function* () {
          yield* writeLock
          const found = yield* existing("users", "id", [userId])
          if (found.has(userId)) return yield* new OperatorStore.UserExists({ userId })
          yield* sql`INSERT INTO users (id) VALUES (${userId})`
        })
      ),

    listUsers: read(users(undefined)),

    // Rows go before the rows they refer to, as the foreign keys ask.
    removeUser: (userId) =>
      ofUser(
        userId,
        Effect.gen(function* () {
          const { api_keys: apiKeys, ...rest } = yield* owned(userId)
          const files = sql`SELECT id FROM files WHERE user_id = ${userId}`
          const webhooks = sql`SELECT id FROM webhooks WHERE file_id IN (${files})`
          yield* sql`DELETE FROM webhook_attempts WHERE webhook_id IN (${webhooks})`
          yield* sql`DELETE FROM webhook_events WHERE webhook_id IN (${webhooks})`
          yield* sql`DELETE FROM webhooks WHERE file_id IN (${files})`
          yield* sql`DELETE FROM content_names WHERE file_id IN (${files})`
          yield* sql`DELETE FROM submission_erasures WHERE file_id IN (${files})`
          yield* sql`DELETE FROM submissions WHERE file_id IN (${files})`
          yield* sql`DELETE FROM files WHERE user_id = ${userId}`
          yield* sql`DELETE FROM api_keys WHERE user_id = ${userId}`
          yield* sql`DELETE FROM users WHERE id = ${userId}`
          return { apiKeys, ...rest }
        })
      ),

    userExists: (userId: FileData.UserId) =>
      Effect.map(read(existing("users", "id", [userId])), (found) => found.has(userId))
  }
}
