/**
 * The `OperatorStore` port over an @effect/sql client, for any engine a `SqlDialect` describes.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type * as Statement from "@effect/sql/Statement"
import {
  ApiKeyPrefix,
  Append,
  ExportEncoder,
  FileData,
  type FileDataError,
  type Fixture,
  ImportRules,
  type OperatorStore,
  SubmissionEntry,
  SubmissionId
} from "@filedata/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ContentNames from "./ContentNames.js"
import * as Accounts from "./internal/accounts.js"
import * as Erasure from "./internal/erasure.js"
import * as Outbox from "./internal/outbox.js"
import * as Rows from "./internal/rows.js"
import { hashKeyText } from "./KeyHash.js"
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
    const engine = dialect(sql)
    const { instant, boolean, int8, writeLock, staging } = engine
    const outbox = Outbox.make(sql, engine)
    const erasure = Erasure.make(sql, engine, outbox)

    // Ids obey the core's text rules (`TextRules`) before they reach a port, so every engine can look them up.
    const found = SqlSchema.findAll({
      Request: Schema.Struct({
        table: Schema.Literal("users", "files", "api_keys"),
        column: Schema.Literal("id", "key_hash"),
        values: Schema.Array(Schema.String)
      }),
      Result: Schema.Struct({ value: Schema.String }),
      execute: ({ table, column, values }) =>
        sql`SELECT ${sql(column)} AS value FROM ${sql(table)} WHERE ${sql.in(column, values)}`
    })
    const existing = (
      table: "users" | "files" | "api_keys",
      column: "id" | "key_hash",
      values: ReadonlyArray<string>
    ): Effect.Effect<ReadonlySet<string>, SqlError> =>
      Effect.map(
        Effect.forEach(Arr.chunksOf(values, batchSize), (batch) =>
          Rows.orDieOnRow(found({ table, column, values: batch }))
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

    const problems = (fixture: ImportRules.FixtureOutline): Effect.Effect<Array<Fixture.FixtureIssue>, SqlError> =>
      Effect.gen(function* () {
        const { fileIds, userIds } = ImportRules.lookups(fixture)
        const hashes = yield* existing(
          "api_keys",
          "key_hash",
          fixture.users.flatMap((user) => user.apiKeys.map(hashKeyText))
        )
        return ImportRules.conflicts(fixture, {
          users: yield* existing("users", "id", userIds),
          files: yield* existing("files", "id", fileIds),
          keyInUse: (key) => hashes.has(hashKeyText(key))
        })
      })

    // Each submission is staged with its new id, its content as imported and rendered as the reply and the CSV export write
    // it, so no read formats it. The content names they bring are collected on the way, with each CSV row.
    const stage =
      (names: ContentNames.Collector) =>
      (submissions: ReadonlyArray<Fixture.FileSubmission>): Effect.Effect<void, SqlError> =>
        staging.insert(
          submissions.map((submission) => {
            const createdDate = FileData.timestampFromEpochMillis(submission.createdDate)
            const csv = names.add(submission.file, createdDate, submission.contentJson)
            return {
              id: SubmissionId.unsafeRandom(),
              file: submission.file,
              createdDate: submission.createdDate,
              content: submission.contentJson,
              entry: SubmissionEntry.fromStored({ createdDate, contentJson: submission.contentJson }),
              csv: csv.text,
              csvWidth: csv.width
            }
          })
        )

    const write = (
      fixture: ImportRules.FixtureOutline,
      names: ContentNames.Collector,
      now: number
    ): Effect.Effect<number, SqlError> =>
      Effect.gen(function* () {
        const apiKeys = fixture.users.flatMap((user) =>
          user.apiKeys.map((key) => ({
            userId: user.id,
            keyHash: hashKeyText(key),
            prefix: Option.getOrNull(ApiKeyPrefix.fromText(key))
          }))
        )
        yield* insertAll("users", ["id"], fixture.users, (user) => sql`(${user.id})`)
        yield* insertAll(
          "api_keys",
          ["user_id", "key_hash", "key_prefix", "created_at"],
          apiKeys,
          (key) => sql`(${key.userId}, ${key.keyHash}, ${key.prefix}, ${instant(now)})`
        )
        yield* insertAll(
          "files",
          ["id", "user_id", "name", "creation_date", "public_availability", "submission_counter", "visit_counter"],
          fixture.files,
          (file) =>
            sql`(${file.id}, ${file.userId}, ${file.name}, ${instant(file.creationDate)},
              ${boolean(file.publicAvailability)}, ${int8(file.SubmissionCounter)}, ${int8(file.VisitCounter)})`
        )
        yield* copyStaged(fixture.files, names)
        return apiKeys.length
      })

    // The staged rows go into `submissions` in document order, each to the file at its position in `$.files`,
    // so seq keeps a createdDate tie in the document's order, after the file's earlier rows. Their new content
    // names follow in the same transaction; CSV rows made under other positions than the file's are made again
    // first (`ContentNames.plan`).
    const copyStaged = (
      files: ReadonlyArray<{ readonly id: string; readonly index: number }>,
      names: ContentNames.Collector
    ): Effect.Effect<void, SqlError> =>
      Effect.gen(function* () {
        yield* insertAll("import_files", ["file_index", "id"], files, (file) => sql`(${file.index}, ${file.id})`)
        const planned = yield* ContentNames.plan(sql, files, names)
        for (const [index, positions] of planned.restage) {
          yield* staging.restage(
            index,
            (createdDate, content) =>
              ExportEncoder.storedCsvRow(
                FileData.timestampFromEpochMillis(createdDate),
                JSON.parse(content) as Record<string, string>,
                positions
              ) as ExportEncoder.StoredCsvRow
          )
        }
        yield* staging.copy
        yield* ContentNames.record(sql, int8, planned)
      })

    // The stored SubmissionCounter of each of these files that exists.
    const counters = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ id: Schema.String, counter: Rows.Int }),
      execute: (ids) => sql`SELECT id, submission_counter AS counter FROM files WHERE ${sql.in("id", ids)}`
    })
    const submissionCounters = (ids: ReadonlyArray<string>): Effect.Effect<Map<string, number>, SqlError> =>
      Effect.map(
        Effect.forEach(Arr.chunksOf(ids, batchSize), (batch) => Rows.orDieOnRow(counters(batch))),
        (pages) => new Map(pages.flatMap((rows) => rows.map((row) => [row.id, row.counter] as const)))
      )

    // Per file, one CASE arm in a statement for many files: few round trips whatever the number of files.
    const updateCounters = (outline: Append.AppendOutline): Effect.Effect<void, SqlError> => {
      const changes = outline.files
        .map((file) => ({ id: file.id, added: outline.appended[file.index] ?? 0, visits: file.VisitCounter }))
        .filter((change) => change.added > 0 || change.visits !== undefined)
      const arms = sql.join(" ", false)
      return Effect.forEach(
        Arr.chunksOf(changes, batchSize),
        (batch) => {
          const ids = batch.map((change) => change.id)
          const visits = batch.flatMap((change) =>
            change.visits === undefined ? [] : [sql`WHEN ${change.id} THEN ${int8(change.visits)}`]
          )
          return sql`UPDATE files SET
            submission_counter = submission_counter
              + CASE id ${arms(batch.map((change) => sql`WHEN ${change.id} THEN ${int8(change.added)}`))} END
            ${visits.length === 0 ? sql.literal("") : sql`, visit_counter = CASE id ${arms(visits)} ELSE visit_counter END`}
            WHERE ${sql.in("id", ids)}`
        },
        { discard: true }
      )
    }

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

    // An import or an append: one transaction under the write lock, its submissions staged as its stream is
    // read, checked once the stream has ended (under the lock, so no other writer changes what was checked
    // before the write), then written; any refusal or failure rolls all of it back. Checked also when the
    // source refused entries, so that its problems and the conflicts with storage are named at once.
    const staged = <O extends ImportRules.StagedSubmissions, A, E, R>(
      stageAll: Effect.Effect<O, E | SqlError, R>,
      check: (outline: O) => Effect.Effect<ReadonlyArray<Fixture.FixtureIssue>, SqlError>,
      writeAll: (outline: O) => Effect.Effect<A, SqlError>
    ) =>
      transaction(
        Effect.gen(function* () {
          yield* writeLock
          yield* staging.open
          const outline = yield* stageAll
          const refusal = ImportRules.refusal(outline.refused, yield* check(outline))
          if (Option.isSome(refusal)) return yield* refusal.value
          const result = yield* writeAll(outline)
          if (staging.settle !== undefined) yield* staging.settle(outline.submissions)
          yield* staging.close
          return result
        })
      )

    return {
      // Suspended, so each run of the effect collects its own names.
      importFixture: (source) =>
        Effect.suspend(() => {
          const names = ContentNames.collector()
          return staged(ImportRules.stageEntries(source, stage(names)), problems, (fixture) =>
            Effect.map(
              Effect.flatMap(Clock.currentTimeMillis, (now) => write(fixture, names, now)),
              (apiKeys) => ({
                users: fixture.users.length,
                apiKeys,
                files: fixture.files.length,
                submissions: fixture.submissions
              })
            )
          )
        }),

      // Readers see a file before or after an append, never half of it (docs/architecture.md#appending): under
      // the write lock no other writer inserts submissions, so the rows copied get seqs above every committed
      // row, and they commit in this one transaction with the counters' update.
      appendSubmissions: (source) =>
        Effect.suspend(() => {
          const names = ContentNames.collector()
          return staged(
            Append.stageEntries(source, stage(names)),
            (outline) =>
              Effect.map(submissionCounters(Append.lookups(outline)), (counters) => Append.problems(outline, counters)),
            (outline) =>
              Effect.gen(function* () {
                // The webhooks' events go in with the submissions, in this transaction (the outbox): none is
                // ever seen without its submissions, and an append rolled back leaves none.
                const events = yield* outbox.prepare(
                  outline.files.filter((file) => (outline.appended[file.index] ?? 0) > 0).map((file) => file.id)
                )
                yield* copyStaged(outline.files, names)
                yield* updateCounters(outline)
                if (Option.isSome(events)) yield* outbox.write(events.value)
                return { files: outline.files.length, submissions: outline.submissions }
              })
          )
        }),

      // The text is gone from the files once the engine's own step after the commit got it all; a commit that
      // stands is the erasure's outcome either way, so a step that falls short is a warning, not a failure.
      eraseSubmissions: (fileId, selection) =>
        Effect.tap(transaction(Effect.zipRight(writeLock, erasure.erase(fileId, selection))), (summary) =>
          summary.ids.length === 0 || engine.afterErasure === undefined
            ? Effect.void
            : engine.afterErasure.pipe(
                Effect.catchAll((error) => Effect.as(Effect.logWarning(error), false)),
                Effect.flatMap((complete) =>
                  complete
                    ? Effect.void
                    : Effect.logWarning(
                        "The erased text may stay in the database's WAL until its next checkpoint (docs/security.md#erasure)"
                      )
                )
              )
        ),

      ...Accounts.make(sql, engine, { existing, transaction })
    }
  })
