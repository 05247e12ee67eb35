/**
 * The `OperatorStore` port over an @effect/sql SQLite client.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { FileData, FileDataJson, Fixture, OperatorStore } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { hashKey, hashKeyText, unavailable } from "./internal/storage.js"

/**
 * Rows per multi-row statement: few round trips, far below SQLite's limit of 32766 bound variables.
 *
 * @since 0.1.0
 * @category constants
 */
export const batchSize = 500

interface KeyRow {
  readonly id: number
  readonly user_id: string
  readonly created_at: number
  readonly revoked_at: number | null
}

const toKeyInfo = (row: KeyRow): OperatorStore.ApiKeyInfo => ({
  id: String(row.id),
  userId: row.user_id as FileData.UserId,
  createdAt: FileData.timestampFromEpochMillis(row.created_at),
  revokedAt: Option.map(Option.fromNullable(row.revoked_at), FileData.timestampFromEpochMillis)
})

const KEY_ID = /^[1-9]\d{0,15}$/

/**
 * Builds the operator store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<OperatorStore.OperatorStore, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

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

  const insertAll = (
    table: "users" | "files" | "api_keys" | "import_submissions" | "import_files",
    rows: ReadonlyArray<Record<string, string | number>>
  ): Effect.Effect<void, SqlError> =>
    Effect.forEach(Arr.chunksOf(rows, batchSize), (batch) => sql`INSERT INTO ${sql(table)} ${sql.insert(batch)}`, {
      discard: true
    })

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

  // Submissions wait in a temporary table until the whole fixture is read and checked: a file's id may come
  // after its submissions and its user after the file, and rows referring to them cannot be written before.
  const stage = (submissions: ReadonlyArray<Fixture.FileSubmission>): Effect.Effect<void, SqlError> =>
    insertAll(
      "import_submissions",
      submissions.map((submission) => ({
        file_index: submission.file,
        created_date: submission.createdDate,
        content: submission.contentJson,
        entry: FileDataJson.submissionFromEpochMillis(submission.createdDate, submission.contentJson)
      }))
    )

  const write = (fixture: Fixture.FixtureOutline, now: number): Effect.Effect<number, SqlError> =>
    Effect.gen(function* () {
      const apiKeys = fixture.users.flatMap((user) =>
        user.apiKeys.map((key) => ({ user_id: user.id, key_hash: hashKeyText(key), created_at: now }))
      )
      yield* insertAll(
        "users",
        fixture.users.map((user) => ({ id: user.id }))
      )
      yield* insertAll("api_keys", apiKeys)
      yield* insertAll(
        "files",
        fixture.files.map((file) => ({
          id: file.id,
          user_id: file.userId,
          name: file.name,
          creation_date: file.creationDate,
          public_availability: file.publicAvailability ? 1 : 0,
          submission_counter: file.SubmissionCounter,
          visit_counter: file.VisitCounter
        }))
      )
      yield* sql`CREATE TEMP TABLE import_files (file_index INTEGER PRIMARY KEY, id TEXT NOT NULL)`
      yield* insertAll(
        "import_files",
        fixture.files.map((file, index) => ({ file_index: index, id: file.id }))
      )
      // In staging order, which is document order, so seq breaks createdDate ties the way the fixture lists them.
      // `content` too, while instances of the previous release may still read it (SqliteMigrations).
      yield* sql`INSERT INTO submissions (file_id, created_date, content, entry)
        SELECT (SELECT id FROM import_files AS f WHERE f.file_index = s.file_index), s.created_date, s.content,
          s.entry
        FROM import_submissions AS s ORDER BY s.rowid`
      return apiKeys.length
    })

  const keyColumns = sql.literal("id, user_id, created_at, revoked_at")

  return {
    importFixture: (source) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`CREATE TEMP TABLE import_submissions (
              file_index INTEGER NOT NULL,
              created_date INTEGER NOT NULL,
              content TEXT NOT NULL,
              entry TEXT NOT NULL
            )`
            const fixture = yield* Fixture.stageEntries(source, stage)
            // Checked inside the transaction, so no other writer can take an id between check and write.
            const issues = yield* problems(fixture)
            if (issues.length > 0) return yield* new Fixture.FixtureInvalid({ issues })
            const apiKeys = yield* write(fixture, yield* Clock.currentTimeMillis)
            // Temporary tables outlive a transaction on SQLite; a failed one takes them away with its rollback.
            yield* sql`DROP TABLE temp.import_submissions`
            yield* sql`DROP TABLE temp.import_files`
            return {
              users: fixture.users.length,
              apiKeys,
              files: fixture.files.length,
              submissions: fixture.submissions
            }
          })
        )
        .pipe(Effect.catchTag("SqlError", (error) => Effect.fail(unavailable(error)))),

    createKey: (userId, apiKey) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const users = yield* existing("users", "id", [userId])
            if (!users.has(userId)) return yield* new OperatorStore.UserNotFound({ userId })
            const now = yield* Clock.currentTimeMillis
            const rows = yield* sql<KeyRow>`INSERT INTO api_keys ${sql.insert({
              user_id: userId,
              key_hash: hashKey(apiKey),
              created_at: now
            })} RETURNING ${keyColumns}`
            // RETURNING of a one-row insert always yields that row.
            return toKeyInfo(rows[0] as KeyRow)
          })
        )
        .pipe(Effect.catchTag("SqlError", (error) => Effect.fail(unavailable(error)))),

    revokeKey: (keyId) =>
      Effect.gen(function* () {
        const notFound = new OperatorStore.KeyNotFound({ keyId })
        if (!KEY_ID.test(keyId)) return yield* notFound
        const now = yield* Clock.currentTimeMillis
        // COALESCE keeps the first revocation time when a key is revoked again.
        const rows = yield* sql<KeyRow>`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${now})
          WHERE id = ${Number(keyId)} RETURNING ${keyColumns}`.pipe(Effect.mapError(unavailable))
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
