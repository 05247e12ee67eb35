/**
 * The `OperatorStore` port over an @effect/sql PostgreSQL client.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { FileData, FileDataJson, Fixture, OperatorStore } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { epochMillis, hashKey, hashKeyText, instant, storable, unavailable } from "./internal/storage.js"

/**
 * Rows per multi-row statement: few round trips, far below PostgreSQL's limit of 65535 bound parameters.
 *
 * @since 0.1.0
 * @category constants
 */
export const batchSize = 500

// pg hands int8 over as text.
interface KeyRow {
  readonly id: string
  readonly user_id: string
  readonly created_at: string
  readonly revoked_at: string | null
}

const toKeyInfo = (row: KeyRow): OperatorStore.ApiKeyInfo => ({
  id: row.id,
  userId: row.user_id as FileData.UserId,
  createdAt: FileData.timestampFromEpochMillis(Number(row.created_at)),
  revokedAt: Option.map(Option.fromNullable(row.revoked_at), (millis) =>
    FileData.timestampFromEpochMillis(Number(millis))
  )
})

const KEY_ID = /^[1-9]\d{0,15}$/

// Any fixed number works; only this adapter's writers take it.
const WRITE_LOCK_KEY = 7_305_164_212

/**
 * Builds the operator store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<OperatorStore.OperatorStore, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  // Under READ COMMITTED a check does not stop another transaction from taking the same id before the
  // write; writers take turns instead, as they do on SQLite, so a clash is reported and never half done.
  const writeLock = sql`SELECT pg_advisory_xact_lock(${WRITE_LOCK_KEY}::int8)`

  const existing = (
    table: "users" | "files" | "api_keys",
    column: "id" | "key_hash",
    values: ReadonlyArray<string>
  ): Effect.Effect<ReadonlySet<string>, SqlError> =>
    Effect.map(
      Effect.forEach(
        Arr.chunksOf(values.filter(storable), batchSize),
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

  const issue = (path: ReadonlyArray<PropertyKey>, detail: string) =>
    new Fixture.FixtureIssue({ path: Fixture.jsonPath(path), detail })

  // PostgreSQL text cannot hold U+0000; refused by path like any other entry it cannot store. A stored
  // submission is a timestamp and content as JSON text, where the character is always escaped.
  const unstorable = (fixture: Fixture.FixtureOutline): Array<Fixture.FixtureIssue> => {
    const check = (path: ReadonlyArray<PropertyKey>, text: string) =>
      storable(text) ? [] : [issue(path, "must not contain the character U+0000")]
    return [
      ...fixture.users.flatMap((user, u) => check(["users", u, "id"], user.id)),
      ...fixture.files.flatMap((file, f) => [
        ...check(["files", f, "id"], file.id),
        ...check(["files", f, "userId"], file.userId),
        ...check(["files", f, "name"], file.name)
      ])
    ]
  }

  const problems = (fixture: Fixture.FixtureOutline): Effect.Effect<Array<Fixture.FixtureIssue>, SqlError> =>
    Effect.gen(function* () {
      const refused = unstorable(fixture)
      if (refused.length > 0) return refused
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
  // A batch travels as four array parameters, which PostgreSQL takes far faster than thousands of scalars.
  // Each submission is staged also rendered as the reply writes it, so no read formats it; content is still
  // written for older instances, which read only it during a rolling deploy (see PgMigrations).
  const stage = (submissions: ReadonlyArray<Fixture.FileSubmission>): Effect.Effect<void, SqlError> =>
    sql`INSERT INTO import_submissions (file_index, created_millis, content, entry)
      SELECT * FROM unnest(
        ${submissions.map((submission) => submission.file)}::int4[],
        ${submissions.map((submission) => submission.createdDate)}::int8[],
        ${submissions.map((submission) => submission.contentJson)}::text[],
        ${submissions.map((submission) =>
          FileDataJson.submissionFromEpochMillis(submission.createdDate, submission.contentJson)
        )}::text[]
      )`

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
        (key) => sql`(${key.userId}, ${key.keyHash}, ${instant(sql, now)})`
      )
      yield* insertAll(
        "files",
        ["id", "user_id", "name", "creation_date", "public_availability", "submission_counter", "visit_counter"],
        fixture.files,
        (file) =>
          sql`(${file.id}, ${file.userId}, ${file.name}, ${instant(sql, file.creationDate)},
            ${file.publicAvailability}, ${file.SubmissionCounter}::int8, ${file.VisitCounter}::int8)`
      )
      yield* sql`CREATE TEMP TABLE import_files (file_index int4 PRIMARY KEY, id text NOT NULL) ON COMMIT DROP`
      yield* insertAll(
        "import_files",
        ["file_index", "id"],
        fixture.files.map((file, index) => ({ index, id: file.id })),
        (file) => sql`(${file.index}, ${file.id})`
      )
      // In staging order, which is document order, so seq breaks createdDate ties the way the fixture lists them.
      // Milliseconds become a timestamptz as `instant` makes them: whole seconds, exact as float8, plus the rest.
      yield* sql`INSERT INTO submissions (file_id, created_date, content, entry)
        SELECT f.id,
          to_timestamp(div(s.created_millis, 1000)::float8) + mod(s.created_millis, 1000)::int * interval '1 millisecond',
          s.content, s.entry
        FROM import_submissions AS s JOIN import_files AS f USING (file_index)
        ORDER BY s.seq`
      return apiKeys.length
    })

  const keyColumns = sql`id, user_id, ${epochMillis(sql, "created_at")} AS created_at,
    ${epochMillis(sql, "revoked_at")} AS revoked_at`

  return {
    importFixture: (source) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* writeLock
            // An import reads the whole fixture inside its transaction; the request budget does not apply.
            yield* sql`SET LOCAL statement_timeout = 0`
            yield* sql`CREATE TEMP TABLE import_submissions (
              seq bigserial,
              file_index int4 NOT NULL,
              created_millis int8 NOT NULL,
              content text NOT NULL,
              entry text NOT NULL
            ) ON COMMIT DROP`
            const fixture = yield* Fixture.stageEntries(source, stage)
            const issues = yield* problems(fixture)
            if (issues.length > 0) return yield* new Fixture.FixtureInvalid({ issues })
            const apiKeys = yield* write(fixture, yield* Clock.currentTimeMillis)
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
            yield* writeLock
            const users = yield* existing("users", "id", [userId])
            if (!users.has(userId)) return yield* new OperatorStore.UserNotFound({ userId })
            const now = yield* Clock.currentTimeMillis
            const rows = yield* sql<KeyRow>`INSERT INTO api_keys (user_id, key_hash, created_at)
              VALUES (${userId}, ${hashKey(apiKey)}, ${instant(sql, now)}) RETURNING ${keyColumns}`
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
        const rows = yield* sql<KeyRow>`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${instant(sql, now)})
          WHERE id = ${keyId}::int8 RETURNING ${keyColumns}`.pipe(Effect.mapError(unavailable))
        const row = rows[0]
        return row === undefined ? yield* notFound : toKeyInfo(row)
      }),

    listKeys: (userId) =>
      Option.match(userId, {
        onNone: () => sql<KeyRow>`SELECT ${keyColumns} FROM api_keys ORDER BY id`,
        onSome: (id) =>
          storable(id)
            ? sql<KeyRow>`SELECT ${keyColumns} FROM api_keys WHERE user_id = ${id} ORDER BY id`
            : Effect.succeed<ReadonlyArray<KeyRow>>([])
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
