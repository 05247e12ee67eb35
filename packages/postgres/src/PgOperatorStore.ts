/**
 * The `OperatorStore` port over an @effect/sql PostgreSQL client: PostgreSQL's own SQL for the shared store.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { OperatorStore } from "@filedata/core"
import { type SqlDialect, SqlOperatorStore } from "@filedata/sql"
import * as Effect from "effect/Effect"
import { epochMillis, instant } from "./internal/storage.js"

// Submissions a write copies at least for it to refresh the table's statistics (`settle`).
const ANALYZE_AFTER = 10_000

// Staged rows rendered again per step (`restage`), so a big append does it in bounded memory.
const RESTAGE_BATCH = 5000

// Any fixed number works; only this adapter's writers take it.
const WRITE_LOCK_KEY = 7_305_164_212

/**
 * Instants as `timestamptz`, int8 cast explicitly, temporary tables dropped at commit. Under READ COMMITTED a
 * check does not stop another transaction from taking the same id before the write, so writers take turns
 * on an advisory lock instead, as they do on SQLite, and a clash is reported and never half done.
 *
 * @since 0.1.0
 * @category dialect
 */
export const dialect: SqlDialect.Make = (sql) => ({
  instant: (epochMillis) => instant(sql, epochMillis),
  epochMillis: (column) => epochMillis(sql, column),
  boolean: (value) => sql`${value}`,
  int8: (value) => sql`${value}::int8`,
  skipLocked: sql`FOR UPDATE OF e SKIP LOCKED`,
  writeLock: Effect.asVoid(sql`SELECT pg_advisory_xact_lock(${WRITE_LOCK_KEY}::int8)`),
  claimLock: Effect.void,
  staging: {
    open: Effect.all(
      [
        // An import reads the whole fixture inside its transaction; the request budget does not apply.
        sql`SET LOCAL statement_timeout = 0`,
        sql`CREATE TEMP TABLE import_submissions (
          seq bigserial,
          id text NOT NULL,
          file_index int4 NOT NULL,
          created_millis int8 NOT NULL,
          content text NOT NULL,
          entry text NOT NULL,
          csv text NOT NULL,
          csv_width int4 NOT NULL
        ) ON COMMIT DROP`,
        sql`CREATE TEMP TABLE import_files (file_index int4 PRIMARY KEY, id text NOT NULL) ON COMMIT DROP`
      ],
      { discard: true }
    ),
    // A batch travels as array parameters, which PostgreSQL takes far faster than thousands of scalars.
    insert: (submissions) =>
      sql`INSERT INTO import_submissions (id, file_index, created_millis, content, entry, csv, csv_width)
        SELECT * FROM unnest(
          ${submissions.map((submission) => submission.id)}::text[],
          ${submissions.map((submission) => submission.file)}::int4[],
          ${submissions.map((submission) => submission.createdDate)}::int8[],
          ${submissions.map((submission) => submission.content)}::text[],
          ${submissions.map((submission) => submission.entry)}::text[],
          ${submissions.map((submission) => submission.csv)}::text[],
          ${submissions.map((submission) => submission.csvWidth)}::int4[]
        )`,
    // A step's rows read by seq and written back in one statement, as arrays.
    restage: (file, render) =>
      Effect.gen(function* () {
        let last = "0"
        for (;;) {
          const rows = yield* sql<{ readonly seq: string; readonly created_millis: string; readonly content: string }>`
            SELECT seq, created_millis, content FROM import_submissions
            WHERE file_index = ${file} AND seq > ${last}::int8 ORDER BY seq LIMIT ${RESTAGE_BATCH}`
          const end = rows.at(-1)
          if (end === undefined) return
          const rendered = rows.map((row) => render(Number(row.created_millis), row.content))
          yield* sql`UPDATE import_submissions AS s SET csv = u.csv, csv_width = u.width
            FROM unnest(
              ${rows.map((row) => row.seq)}::int8[],
              ${rendered.map((csv) => csv.text)}::text[],
              ${rendered.map((csv) => csv.width)}::int4[]
            ) AS u (seq, csv, width)
            WHERE s.seq = u.seq`
          last = end.seq
        }
      }),
    // Milliseconds become a timestamptz as `instant` makes them: whole seconds, exact as float8, plus the rest.
    copy: sql`INSERT INTO submissions (id, file_id, created_date, content, entry, csv, csv_width)
      SELECT s.id, f.id,
        to_timestamp(div(s.created_millis, 1000)::float8) + mod(s.created_millis, 1000)::int * interval '1 millisecond',
        s.content, s.entry, s.csv, s.csv_width
      FROM import_submissions AS s JOIN import_files AS f USING (file_index)
      ORDER BY s.seq`,
    // Until autovacuum gets to it (a minute or more), a table just filled has no statistics, and the planner
    // reads each page of a file by a bitmap scan and a sort of all the file's rows past the position instead of
    // the index in order: 26 ms a page at 100,000 submissions against 0.7 ms. Sampled, so it costs a fraction of
    // the write it follows.
    settle: (copied) => (copied >= ANALYZE_AFTER ? Effect.asVoid(sql`ANALYZE submissions`) : Effect.void),
    close: Effect.void
  },
  // `->>` has an integer and a text form: the name is cast so the parameter picks the text one.
  contentHas: (name, value) => sql`(content::json ->> ${name}::text) = ${value}::text`,
  // An erasure is an operator's command, not a request: a `--where` scans the whole file, which the requests'
  // statement budget (5 s by default) does not allow for at a million submissions.
  beforeErasure: Effect.asVoid(sql`SET LOCAL statement_timeout = 0`),
  // The submissions' own sequence, as the erasures' DEFAULT is; taken under the write lock, so ascending.
  takeSeqs: (count) =>
    Effect.map(
      sql<{ readonly seq: string }>`SELECT s.n::text AS seq FROM (
          SELECT nextval(pg_get_serial_sequence('submissions', 'seq')) AS n FROM generate_series(1, ${count}::int4)
        ) AS s ORDER BY s.n`,
      (rows) => rows.map((row) => row.seq)
    )
})

/**
 * Builds the operator store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<OperatorStore.OperatorStore, never, SqlClient.SqlClient> =
  SqlOperatorStore.make(dialect)
