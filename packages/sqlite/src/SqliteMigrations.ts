/**
 * The schema of the SQLite adapter, as @effect/sql migrations: one initial schema, and the migrations of
 * later versions after it.
 *
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SharedTables, SqlMigrations } from "@filedata/sql"
import * as Effect from "effect/Effect"
import { writeLock } from "./internal/writeLock.js"

// How this engine spells the columns of the tables both adapters create alike, as `initialSchema` does.
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

const initialSchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // STRICT tables refuse a value of the wrong type instead of silently storing it.
  yield* sql`CREATE TABLE users (
    id TEXT PRIMARY KEY NOT NULL
  ) STRICT`
  // Only the SHA-256 of a key is kept: a copy of the database file gives no usable key. The prefix is the key's
  // first characters, so an operator can match a leaked key to its id (ApiKeyPrefix); short keys have none.
  yield* sql`CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL REFERENCES users (id),
    key_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    key_prefix TEXT
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
  // insertion order; content is the imported JSON text, never re-encoded. Each submission is also kept as the
  // reply writes it (`SubmissionEntry`) and as its CSV row (`ExportEncoder.StoredCsvRow`), rendered once when
  // written, so reads join them inside SQLite (docs/performance.md#stored-reply-entries).
  yield* sql`CREATE TABLE submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id TEXT NOT NULL REFERENCES files (id),
    created_date INTEGER NOT NULL,
    content TEXT NOT NULL,
    entry TEXT NOT NULL,
    csv TEXT NOT NULL,
    csv_width INTEGER NOT NULL
  ) STRICT`
  // Serves the keyset pages of a file's submissions in reply order without a sort.
  yield* sql`CREATE INDEX submissions_file_created_seq ON submissions (file_id, created_date, seq)`
  yield* SharedTables.create(sql, columnTypes)
})

// Submission ids and the change feed (docs/architecture.md#the-change-feed). Rows stored before get an id here
// (80 random bits in hex: SQLite has no base64); every later row gets one from the store. SQLite cannot add a
// NOT NULL column without a constant default, so NOT NULL is the store's rule and the unique index its guard.
// An erasure takes its feed position from the submissions' own AUTOINCREMENT counter (sqlite_sequence), so the
// feed's created and erased changes share one order, which is commit order: writers take turns (writeLock).
const submissionIdsAndChanges = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE submissions ADD COLUMN id TEXT`
  yield* sql`UPDATE submissions SET id = 'sub_' || lower(hex(randomblob(10)))`
  yield* sql`CREATE UNIQUE INDEX submissions_id ON submissions (id)`
  // Serves a file's feed in seq order without a sort.
  yield* sql`CREATE INDEX submissions_file_seq ON submissions (file_id, seq)`
  yield* sql`CREATE TABLE submission_erasures (
    seq INTEGER PRIMARY KEY NOT NULL,
    file_id TEXT NOT NULL REFERENCES files (id),
    submission_id TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX submission_erasures_file_seq ON submission_erasures (file_id, seq)`
})

/**
 * Every migration, by `<id>_<name>`; entries are only ever appended, after the initial schema.
 *
 * @since 0.1.0
 * @category migrations
 */
export const loader: Migrator.Loader = Migrator.fromRecord({
  "1_initial_schema": initialSchema,
  "2_submission_ids_and_changes": submissionIdsAndChanges
})

/**
 * Brings the database to the latest schema; migrations already applied are skipped, so it is idempotent.
 * Processes starting together take turns: everything runs in one transaction that takes the write lock
 * first, so the second waits for the first to finish, then finds nothing left to do. A database made before
 * the initial schema is refused (`SqlMigrations.run`).
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
