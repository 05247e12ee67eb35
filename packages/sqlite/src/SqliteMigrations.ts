/**
 * The schema of the SQLite adapter, as @effect/sql migrations.
 *
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

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

/**
 * Every migration, by `<id>_<name>`; entries are only ever appended.
 *
 * @since 0.1.0
 * @category migrations
 */
export const loader: Migrator.Loader = Migrator.fromRecord({
  "1_create_tables": createTables
})

// The sqlite-node migrator only adds schema dumps through the sqlite3 binary, which is not used here
// and would drag in FileSystem, Path and CommandExecutor.
const migrate = Migrator.make({})

/**
 * Brings the database to the latest schema; migrations already applied are skipped, so it is idempotent.
 *
 * @since 0.1.0
 * @category migrations
 */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = migrate({ loader })
