/**
 * The schema of the SQLite adapter, as @effect/sql migrations.
 *
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SubmissionEntry } from "@filedata/core"
import { ContentNames, SqlMigrations, SqlWebhookStore } from "@filedata/sql"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import { writeLock } from "./internal/writeLock.js"

// How this engine spells the columns of the tables both adapters create alike, as `createTables` does.
const columnTypes: SqlMigrations.ColumnTypes = {
  text: "TEXT",
  int4: "INTEGER",
  int8: "INTEGER",
  instant: "INTEGER",
  textKey: "TEXT PRIMARY KEY NOT NULL",
  serialKey: "INTEGER PRIMARY KEY AUTOINCREMENT",
  boolean: (column) => `INTEGER NOT NULL CHECK (${column} IN (0, 1))`,
  tableOptions: " STRICT"
}

const createTables = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // STRICT tables refuse a value of the wrong type instead of silently storing it.
  yield* sql`CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL
  ) STRICT`
  // Only the SHA-256 of a key is kept: a copy of the database file gives no usable key.
  yield* sql`CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL REFERENCES users (id),
    key_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  ) STRICT`
  yield* sql`CREATE INDEX api_keys_user_id ON api_keys (user_id, id)`
  // Instants are epoch milliseconds (UTC), so they compare and sort as numbers.
  yield* sql`CREATE TABLE files (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    name TEXT NOT NULL,
    creation_date INTEGER NOT NULL,
    public_availability INTEGER NOT NULL CHECK (public_availability IN (0, 1)),
    submission_counter INTEGER NOT NULL CHECK (submission_counter >= 0),
    visit_counter INTEGER NOT NULL CHECK (visit_counter >= 0)
  ) STRICT`
  // AUTOINCREMENT keeps seq growing with insertion even after deletes, so it breaks createdDate ties in
  // insertion order; content is the imported JSON text, never re-encoded.
  yield* sql`CREATE TABLE submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id TEXT NOT NULL REFERENCES files (id),
    created_date INTEGER NOT NULL,
    content TEXT NOT NULL
  ) STRICT`
  // Serves the keyset pages of a file's submissions in reply order without a sort.
  yield* sql`CREATE INDEX submissions_file_created_seq ON submissions (file_id, created_date, seq)`
})

// Rows filled per step below, so a database of a million submissions converts in bounded memory.
const BACKFILL_BATCH = 5000
// Rows per multi-row insert: two bound variables each, far below SQLite's limit of 32766.
const INSERT_BATCH = 1000

// Each submission is also kept as the reply writes it (`SubmissionEntry`), rendered once here and at
// import instead of on every read (docs/performance.md#stored-reply-entries). Expand only, as a release must be during a rolling
// deploy (docs/operations.md): instances of the previous release still read and write `content` and know
// nothing of `entry`, so `content` stays and `entry` may be NULL for rows such an instance imports meanwhile
// (the reader renders those itself). A later release fills what is left, then drops `content`.
const submissionEntries = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE submissions ADD COLUMN entry TEXT`
  // The rendered entries of a step wait in a temporary table and go in with one UPDATE, so a step is a few
  // statements rather than one per row.
  yield* sql`CREATE TEMP TABLE entry_backfill (seq INTEGER PRIMARY KEY, entry TEXT NOT NULL)`
  let last = 0
  for (;;) {
    const rows = yield* sql<{ readonly seq: number; readonly created_date: number; readonly content: string }>`
      SELECT seq, created_date, content FROM submissions WHERE seq > ${last} ORDER BY seq LIMIT ${BACKFILL_BATCH}`
    if (rows.length === 0) break
    yield* Effect.forEach(
      Arr.chunksOf(rows, INSERT_BATCH),
      (batch) =>
        sql`INSERT INTO temp.entry_backfill ${sql.insert(
          batch.map((row) => ({
            seq: row.seq,
            entry: SubmissionEntry.render(row.created_date, row.content)
          }))
        )}`,
      { discard: true }
    )
    const first = last
    last = (rows[rows.length - 1] as (typeof rows)[number]).seq
    // The seq range keeps SQLite from scanning the whole table for each step (EXPLAIN QUERY PLAN: a search
    // of the step's rows by rowid, where a join on seq alone scans every submission).
    yield* sql`UPDATE submissions SET entry = b.entry FROM temp.entry_backfill AS b
      WHERE submissions.seq = b.seq AND submissions.seq > ${first} AND submissions.seq <= ${last}`
    yield* sql`DELETE FROM temp.entry_backfill`
  }
  yield* sql`DROP TABLE temp.entry_backfill`
})

// The first characters of each key, kept at creation so an operator can match a leaked key to its id
// (ApiKeyPrefix). Expand only (docs/operations.md): nullable, since the keys stored so far are kept only as
// hashes and cannot get one, and instances of the previous release create keys without it meanwhile.
const apiKeyPrefixes = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN key_prefix TEXT`
})

// The rows without an entry (imported during a rolling deploy by an instance of a release from before migration
// 2) in an index of their own, so a read asks whether a file has any with a seek instead of counting entries
// over every row it joins (docs/performance.md#pages-joined-in-storage). Expand only: no row has to change, and
// it stays empty while every row has its entry. The release that drops `content` drops it too. Numbered 5:
// PostgreSQL's migration 4 is its own, and the numbers keep one meaning across the adapters.
const submissionsWithoutEntry = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX submissions_without_entry ON submissions (file_id) WHERE entry IS NULL`
})

// Numbered 7 as on PostgreSQL (`SqlWebhookStore.migration`).
const webhooks = Effect.flatMap(SqlClient.SqlClient, (sql) => SqlWebhookStore.migration(sql, columnTypes))

// Numbered 6 on both adapters (`ContentNames.migration`); 7 is the webhooks'.
const contentNames = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  ContentNames.migration(sql, columnTypes, (value) => sql`${Number(value)}`)
)

// Each submission's CSV row as an export writes it (`ExportEncoder.StoredCsvRow`), rendered once here and at
// import and append, so an export reads rows joined inside SQLite as a reply does
// (docs/performance.md#export-rows-rendered-at-import). Expand only: instances of the previous release write
// rows without one meanwhile, and a row whose names its file does not list gets none here; reads render those
// themselves, found by the partial index that holds only them. Numbered 9 on both adapters.
const csvRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE submissions ADD COLUMN csv TEXT`
  yield* sql`ALTER TABLE submissions ADD COLUMN csv_width INTEGER`
  yield* ContentNames.backfillCsvRows(
    sql,
    (value) => sql`${Number(value)}`,
    (column) => sql`${sql(column)}`,
    (rows) =>
      // The seq range keeps SQLite from scanning the whole table for each step (as `submissionEntries`).
      sql`UPDATE submissions SET csv = v.column2, csv_width = v.column3 FROM (VALUES ${sql.csv(
        rows.map(([seq, text, width]) => sql`(${Number(seq)}, ${text}, ${width})`)
      )}) AS v WHERE submissions.seq = v.column1
        AND submissions.seq BETWEEN ${Number(rows[0]?.[0])} AND ${Number(rows.at(-1)?.[0])}`
  )
  yield* sql`CREATE INDEX submissions_without_csv ON submissions (file_id) WHERE csv IS NULL`
})

/**
 * Every migration, by `<id>_<name>`; entries are only ever appended.
 *
 * @since 0.1.0
 * @category migrations
 */
export const loader: Migrator.Loader = Migrator.fromRecord({
  "1_create_tables": createTables,
  "2_submission_entries": submissionEntries,
  "3_api_key_prefixes": apiKeyPrefixes,
  "5_submissions_without_entry": submissionsWithoutEntry,
  "6_content_names": contentNames,
  "7_webhooks": webhooks,
  "9_csv_rows": csvRows
})

/**
 * Brings the database to the latest schema; migrations already applied are skipped, so it is idempotent.
 * Processes starting together take turns: everything runs in one transaction that takes the write lock
 * first, so the second waits for the first to finish, then finds nothing left to do.
 *
 * @since 0.1.0
 * @category migrations
 */
export const run: SqlMigrations.Run = SqlMigrations.run({
  loader,
  // The Migrator's own definition, made before the transaction, whose first statement locks by writing to it.
  prepare: (sql) =>
    sql`CREATE TABLE IF NOT EXISTS ${sql(SqlMigrations.table)} (
      migration_id integer PRIMARY KEY NOT NULL,
      created_at datetime NOT NULL DEFAULT current_timestamp,
      name VARCHAR(255) NOT NULL
    )`,
  lock: (sql) => writeLock(sql, SqlMigrations.table)
})
