/**
 * The `OperatorStore` port over an @effect/sql SQLite client: SQLite's own SQL for the shared store.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { OperatorStore } from "@filedata/core"
import { type SqlDialect, SqlOperatorStore } from "@filedata/sql"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { busyWaitMillis, writeLock } from "./internal/writeLock.js"

// Staged rows rendered again per step (`restage`), so a big append does it in bounded memory.
const RESTAGE_BATCH = 5000

/**
 * Instants as epoch milliseconds in INTEGER columns, booleans as 0 and 1; temporary tables stay until dropped.
 *
 * @since 0.1.0
 * @category dialect
 */
export const dialect: SqlDialect.Make = (sql) => ({
  instant: (epochMillis) => sql`${epochMillis}`,
  epochMillis: (column) => sql`${sql(column)}`,
  boolean: (value) => sql`${value ? 1 : 0}`,
  int8: (value) => sql`${Number(value)}`,
  skipLocked: sql.literal(""),
  writeLock: writeLock(sql, "users"),
  claimLock: writeLock(sql, "users"),
  staging: {
    open: Effect.zipRight(
      sql`CREATE TEMP TABLE import_submissions (
        id TEXT NOT NULL,
        file_index INTEGER NOT NULL,
        created_date INTEGER NOT NULL,
        content TEXT NOT NULL,
        entry TEXT NOT NULL,
        csv TEXT NOT NULL,
        csv_width INTEGER NOT NULL
      )`,
      sql`CREATE TEMP TABLE import_files (file_index INTEGER PRIMARY KEY, id TEXT NOT NULL)`
    ),
    insert: (submissions) =>
      Effect.forEach(
        Arr.chunksOf(submissions, SqlOperatorStore.batchSize),
        (batch) =>
          sql`INSERT INTO import_submissions ${sql.insert(
            batch.map((submission) => ({
              id: submission.id,
              file_index: submission.file,
              created_date: submission.createdDate,
              content: submission.content,
              entry: submission.entry,
              csv: submission.csv,
              csv_width: submission.csvWidth
            }))
          )}`,
        { discard: true }
      ),
    // A step's rows read by rowid and written back with one UPDATE from their VALUES.
    restage: (file, render) =>
      Effect.gen(function* () {
        let last = 0
        for (;;) {
          const rows = yield* sql<{ readonly rowid: number; readonly created_date: number; readonly content: string }>`
            SELECT rowid, created_date, content FROM import_submissions
            WHERE file_index = ${file} AND rowid > ${last} ORDER BY rowid LIMIT ${RESTAGE_BATCH}`
          const end = rows.at(-1)
          if (end === undefined) return
          yield* Effect.forEach(
            Arr.chunksOf(rows, SqlOperatorStore.batchSize),
            (batch) =>
              sql`UPDATE import_submissions SET csv = v.column2, csv_width = v.column3 FROM (VALUES ${sql.csv(
                batch.map((row) => {
                  const csv = render(row.created_date, row.content)
                  return sql`(${row.rowid}, ${csv.text}, ${csv.width})`
                })
              )}) AS v WHERE import_submissions.rowid = v.column1`,
            { discard: true }
          )
          last = end.rowid
        }
      }),
    copy: sql`INSERT INTO submissions (id, file_id, created_date, content, entry, csv, csv_width)
      SELECT s.id, (SELECT id FROM import_files AS f WHERE f.file_index = s.file_index), s.created_date, s.content,
        s.entry, s.csv, s.csv_width
      FROM import_submissions AS s ORDER BY s.rowid`,
    // Temporary tables outlive a transaction on SQLite; a failed one takes them away with its rollback.
    close: Effect.zipRight(sql`DROP TABLE temp.import_submissions`, sql`DROP TABLE temp.import_files`)
  },
  // One lookup of the name as a quoted label, whose JSON escapes SQLite reads (so any name can be written), where
  // json_each walked every member: 480 ms against 610 to 700 for a million rows (docs/performance.md#erasure-at-a-million).
  // A content is an object of strings with no name twice, as the import and append rules write it.
  contentHas: (name, value) => sql`json_extract(content, ${`$.${JSON.stringify(name)}`}) = ${value}`,
  // AUTOINCREMENT's counter is the row of sqlite_sequence; moved past the positions taken, no later insert
  // into submissions reuses one.
  takeSeqs: (count) =>
    Effect.gen(function* () {
      const [row] = yield* sql<{ readonly seq: number }>`SELECT seq FROM sqlite_sequence WHERE name = 'submissions'`
      const top = row?.seq ?? 0
      yield* sql`UPDATE sqlite_sequence SET seq = ${top + count} WHERE name = 'submissions'`
      return Array.from({ length: count }, (_, i) => String(top + i + 1))
    }),
  // Deleted rows are zeroed in the pages (secure_delete, SqliteStorage), but the WAL still holds the pages as
  // they were; a TRUNCATE checkpoint copies the new ones into the main file and empties the WAL. A reader
  // inside the WAL (another process's snapshot) holds it up: tried again on a timer, then left to the next
  // checkpoint, which overwrites the frames as the WAL fills again.
  afterErasure: Effect.gen(function* () {
    const until = (yield* Clock.currentTimeMillis) + busyWaitMillis
    for (;;) {
      const [result] = yield* sql<{ readonly busy: number; readonly log: number }>`PRAGMA wal_checkpoint(TRUNCATE)`
      if (result === undefined || (result.busy === 0 && result.log <= 0)) return true
      if ((yield* Clock.currentTimeMillis) >= until) return false
      yield* Effect.sleep("10 millis")
    }
  })
})

/**
 * Builds the operator store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<OperatorStore.OperatorStore, never, SqlClient.SqlClient> =
  SqlOperatorStore.make(dialect)
