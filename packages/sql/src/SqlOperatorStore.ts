/**
 * The `OperatorStore` port over an @effect/sql client, for any engine a `SqlDialect` describes.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { FileData, type FileDataError, Fixture, OperatorStore, SubmissionEntry } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { hashKey, hashKeyText } from "./KeyHash.js"
import type * as SqlDialect from "./SqlDialect.js"
import { unavailable } from "./StorageFailure.js"

/**
 * Rows per multi-row statement: few round trips, far below the bound-parameter limits of SQLite (32766)
 * and PostgreSQL (65535).
 *
 * @since 0.1.0
 * @category constants
 */
export const batchSize = 500

// Instants arrive as numbers, or as int8 text where the driver hands it over so; both are safe integers.
interface KeyRow {
  readonly id: number | string
  readonly user_id: string
  readonly created_at: number | string
  readonly revoked_at: number | string | null
}

const toKeyInfo = (row: KeyRow): OperatorStore.ApiKeyInfo => ({
  id: String(row.id),
  userId: row.user_id as FileData.UserId,
  createdAt: FileData.timestampFromEpochMillis(Number(row.created_at)),
  revokedAt: Option.map(Option.fromNullable(row.revoked_at), (millis) =>
    FileData.timestampFromEpochMillis(Number(millis))
  )
})

const KEY_ID = /^[1-9]\d{0,15}$/

/**
 * Builds the operator store on the client in context, with the engine's own SQL from `dialect`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  dialect: SqlDialect.Make
): Effect.Effect<OperatorStore.OperatorStore, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { instant, epochMillis, boolean, int8, writeLock, staging } = dialect(sql)

    // Ids obey the core's text rules (`TextRules`) before they reach a port, so every engine can look them up.
    const existing = (
      table: "users" | "files" | "api_keys",
      column: "id" | "key_hash",
      values: ReadonlyArray<string>
    ): Effect.Effect<ReadonlySet<string>, SqlError> =>
      Effect.map(
        Effect.forEach(
          Arr.chunksOf(values, batchSize),
          (batch) => sql<{ readonly value: string }>`SELECT ${sql(column)} AS value FROM ${sql(table)}
            WHERE ${sql.in(column, batch)}`
        ),
        (pages) => new Set(pages.flatMap((rows) => rows.map((row) => row.value)))
      )

    const insertAll = <A>(
      table: "users" | "files" | "api_keys" | "import_files",
      columns: ReadonlyArray<string>,
      rows: ReadonlyArray<A>,
      values: (row: A) => Statement.Fragment
    ): Effect.Effect<void, SqlError> =>
      Effect.forEach(
        Arr.chunksOf(rows, batchSize),
        (batch) =>
          sql`INSERT INTO ${sql(table)} (${sql.literal(columns.join(", "))})
            VALUES ${sql.csv(batch.map(values))}`,
        { discard: true }
      )

    const problems = (fixture: Fixture.FixtureOutline): Effect.Effect<Array<Fixture.FixtureIssue>, SqlError> =>
      Effect.gen(function* () {
        const { fileIds, userIds } = Fixture.lookups(fixture)
        const hashes = yield* existing(
          "api_keys",
          "key_hash",
          fixture.users.flatMap((user) => user.apiKeys.map(hashKeyText))
        )
        return Fixture.conflicts(fixture, {
          users: yield* existing("users", "id", userIds),
          files: yield* existing("files", "id", fileIds),
          keyInUse: (key) => hashes.has(hashKeyText(key))
        })
      })

    // Each submission is staged also rendered as the reply writes it, so no read formats it; content is still
    // written for older instances, which read only it during a rolling deploy (docs/operations.md).
    const stage = (submissions: ReadonlyArray<Fixture.FileSubmission>): Effect.Effect<void, SqlError> =>
      staging.insert(
        submissions.map((submission) => ({
          file: submission.file,
          createdDate: submission.createdDate,
          content: submission.contentJson,
          entry: SubmissionEntry.render(submission.createdDate, submission.contentJson)
        }))
      )

    const write = (fixture: Fixture.FixtureOutline, now: number): Effect.Effect<number, SqlError> =>
      Effect.gen(function* () {
        const apiKeys = fixture.users.flatMap((user) =>
          user.apiKeys.map((key) => ({ userId: user.id, keyHash: hashKeyText(key) }))
        )
        yield* insertAll("users", ["id"], fixture.users, (user) => sql`(${user.id})`)
        yield* insertAll(
          "api_keys",
          ["user_id", "key_hash", "created_at"],
          apiKeys,
          (key) => sql`(${key.userId}, ${key.keyHash}, ${instant(now)})`
        )
        yield* insertAll(
          "files",
          ["id", "user_id", "name", "creation_date", "public_availability", "submission_counter", "visit_counter"],
          fixture.files,
          (file) =>
            sql`(${file.id}, ${file.userId}, ${file.name}, ${instant(file.creationDate)},
              ${boolean(file.publicAvailability)}, ${int8(file.SubmissionCounter)}, ${int8(file.VisitCounter)})`
        )
        yield* insertAll(
          "import_files",
          ["file_index", "id"],
          fixture.files.map((file, index) => ({ index, id: file.id })),
          (file) => sql`(${file.index}, ${file.id})`
        )
        yield* staging.copy
        return apiKeys.length
      })

    // One transaction, every SQL failure mapped to the port's. @effect/sql makes a failed COMMIT or ROLLBACK
    // (a connection lost mid-transaction) a defect; for the port it is the database being unavailable.
    const transaction = <A, E, R>(
      effect: Effect.Effect<A, E | SqlError, R>
    ): Effect.Effect<A, Exclude<E, SqlError> | FileDataError.StorageUnavailable, R> =>
      sql.withTransaction(effect).pipe(
        Effect.catchIf(
          (error): error is SqlError => error instanceof SqlError,
          (error) => Effect.fail(unavailable(error))
        ),
        Effect.catchSomeDefect((defect) =>
          defect instanceof SqlError ? Option.some(Effect.fail(unavailable(defect))) : Option.none()
        )
      )

    const keyColumns = sql`id, user_id, ${epochMillis("created_at")} AS created_at,
      ${epochMillis("revoked_at")} AS revoked_at`

    return {
      importFixture: (source) =>
        transaction(
          Effect.gen(function* () {
            yield* writeLock
            yield* staging.open
            const fixture = yield* Fixture.stageEntries(source, stage)
            // Checked under the write lock, so no other writer can take an id between check and write.
            const issues = yield* problems(fixture)
            if (issues.length > 0) return yield* new Fixture.FixtureInvalid({ issues })
            const apiKeys = yield* write(fixture, yield* Clock.currentTimeMillis)
            yield* staging.close
            return {
              users: fixture.users.length,
              apiKeys,
              files: fixture.files.length,
              submissions: fixture.submissions
            }
          })
        ),

      createKey: (userId, apiKey) =>
        transaction(
          Effect.gen(function* () {
            yield* writeLock
            const users = yield* existing("users", "id", [userId])
            if (!users.has(userId)) return yield* new OperatorStore.UserNotFound({ userId })
            const now = yield* Clock.currentTimeMillis
            const rows = yield* sql<KeyRow>`INSERT INTO api_keys (user_id, key_hash, created_at)
                VALUES (${userId}, ${hashKey(apiKey)}, ${instant(now)}) RETURNING ${keyColumns}`
            // RETURNING of a one-row insert always yields that row.
            return toKeyInfo(rows[0] as KeyRow)
          })
        ),

      revokeKey: (keyId) =>
        Effect.gen(function* () {
          const notFound = new OperatorStore.KeyNotFound({ keyId })
          if (!KEY_ID.test(keyId)) return yield* notFound
          const now = yield* Clock.currentTimeMillis
          // One statement, atomic alone. COALESCE keeps the first revocation time when a key is revoked again.
          const rows = yield* sql<KeyRow>`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${instant(now)})
            WHERE id = ${int8(keyId)} RETURNING ${keyColumns}`.pipe(Effect.mapError(unavailable))
          const row = rows[0]
          return row === undefined ? yield* notFound : toKeyInfo(row)
        }),

      listKeys: (userId) =>
        Option.match(userId, {
          onNone: () => sql<KeyRow>`SELECT ${keyColumns} FROM api_keys ORDER BY id`,
          onSome: (id) => sql<KeyRow>`SELECT ${keyColumns} FROM api_keys WHERE user_id = ${id} ORDER BY id`
        }).pipe(
          Effect.map((rows) => rows.map(toKeyInfo)),
          Effect.mapError(unavailable)
        ),

      userExists: (userId) =>
        existing("users", "id", [userId]).pipe(
          Effect.map((users) => users.has(userId)),
          Effect.mapError(unavailable)
        )
    }
  })
