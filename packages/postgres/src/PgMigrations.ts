/**
 * The schema of the PostgreSQL adapter, as @effect/sql migrations: one initial schema, and the migrations of
 * later versions after it.
 *
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SharedTables, SqlMigrations } from "@filedata/sql"
import * as Effect from "effect/Effect"

// How this engine spells the columns of the tables both adapters create alike.
const columnTypes: SqlMigrations.ColumnTypes = {
  text: "text",
  int4: "int4",
  int8: "int8",
  instant: "timestamptz",
  textKey: "text PRIMARY KEY",
  serialKey: "bigserial PRIMARY KEY",
  boolean: () => "boolean NOT NULL",
  tableOptions: ""
}

// A plpgsql function that runs `statement`, and the trigger that calls it once after every statement inserting
// into `table`, in that statement's transaction: every writer runs it.
const afterInsert =
  (table: string) =>
  (options: {
    readonly trigger: string
    readonly function: string
    readonly settings?: string
    readonly statement: string
  }) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const settings = options.settings === undefined ? "" : `${options.settings} `
      yield* sql.unsafe(`CREATE FUNCTION ${options.function}() RETURNS trigger
    LANGUAGE plpgsql ${settings}AS $$
    BEGIN
      ${options.statement};
      RETURN NULL;
    END
    $$`)
      yield* sql.unsafe(`CREATE TRIGGER ${options.trigger} AFTER INSERT ON ${table}
    FOR EACH STATEMENT EXECUTE FUNCTION ${options.function}()`)
    })

const afterSubmissionsInsert = afterInsert("submissions")
const afterErasuresInsert = afterInsert("submission_erasures")

/**
 * The channel on which every committed insert or erasure of submissions is announced.
 *
 * @since 0.2.0
 * @category migrations
 */
export const submissionsChannel = "filedata_submissions"

const initialSchema = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE users (
    id text PRIMARY KEY
  )`
  // Only the SHA-256 of a key is kept: a copy of the database gives no usable key. The prefix is the key's first
  // characters, so an operator can match a leaked key to its id (ApiKeyPrefix); short keys have none.
  yield* sql`CREATE TABLE api_keys (
    id bigserial PRIMARY KEY,
    user_id text NOT NULL REFERENCES users (id),
    key_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    key_prefix text
  )`
  yield* sql`CREATE INDEX api_keys_user_id ON api_keys (user_id, id)`
  // Counters are int8: the fixture accepts any safe integer.
  yield* sql`CREATE TABLE files (
    id text PRIMARY KEY,
    user_id text NOT NULL REFERENCES users (id),
    name text NOT NULL,
    creation_date timestamptz NOT NULL,
    public_availability boolean NOT NULL,
    submission_counter int8 NOT NULL CHECK (submission_counter >= 0),
    visit_counter int8 NOT NULL CHECK (visit_counter >= 0)
  )`
  // seq grows with insertion, so it breaks createdDate ties in insertion order. content is text, not
  // jsonb: jsonb reorders keys and drops duplicates, and the reply splices the imported text in as is. Each
  // submission is also kept as the reply writes it (`SubmissionEntry`) and as its CSV row
  // (`ExportEncoder.StoredCsvRow`), rendered once when written (docs/performance.md#stored-reply-entries).
  yield* sql`CREATE TABLE submissions (
    seq bigserial PRIMARY KEY,
    file_id text NOT NULL REFERENCES files (id),
    created_date timestamptz NOT NULL,
    content text NOT NULL,
    entry text NOT NULL,
    csv text NOT NULL,
    csv_width int4 NOT NULL
  )`
  // Serves the keyset pages of a file's submissions in reply order without a sort.
  yield* sql`CREATE INDEX submissions_file_created_seq ON submissions (file_id, created_date, seq)`
  // The read point of a reply (`FileRepository.FoundFile`), the highest seq committed, kept in a row that each
  // statement inserting submissions moves up in its own transaction, by a trigger, so every writer keeps it.
  // Neither `max(seq)` nor the sequence will do for readers: docs/performance.md#read-point-kept-by-the-writer.
  // Inside the writer, `max(seq)` finds its own rows first: writers take turns (PgOperatorStore's write lock), so
  // no higher seq is in flight and seq order is commit order.
  yield* sql`CREATE TABLE submission_read_point (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    seq int8 NOT NULL
  )`
  yield* sql`INSERT INTO submission_read_point (seq) VALUES (0)`
  yield* afterSubmissionsInsert({
    trigger: "submissions_advance_read_point",
    function: "advance_submission_read_point",
    // The tables are found where the migration found them, whatever a writer's search_path.
    settings: "SET search_path FROM CURRENT",
    statement: "UPDATE submission_read_point SET seq = greatest(seq, (SELECT max(seq) FROM submissions))"
  })
  yield* SharedTables.create(sql, columnTypes)
  // Waiting requests of every instance hear of an append when it commits: a notification sent in the inserting
  // transaction (so only if it commits, and after it did), from a trigger, so every writer sends it. Its payload
  // is fixed (PostgreSQL folds equal notifications of one transaction into one); the listener looks at storage
  // for what changed, and its bounded poll covers a notification lost with a connection.
  yield* afterSubmissionsInsert({
    trigger: "submissions_notify",
    function: "notify_submissions_appended",
    statement: `PERFORM pg_notify('${submissionsChannel}', 'appended')`
  })
})

// Submission ids and the change feed (docs/architecture.md#the-change-feed). Rows stored before get an id here;
// every later row gets one from the store. An erasure takes its feed position from the submissions' own
// sequence, so created and erased changes share one order, which is commit order: writers take turns (the
// advisory write lock, held until the commit is visible), so a position is never taken while a smaller one is
// still uncommitted. Erasures move the read point up and wake waiting requests as inserts do.
const submissionIdsAndChanges = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE submissions ADD COLUMN id text`
  yield* sql`UPDATE submissions SET id = 'sub_' || replace(gen_random_uuid()::text, '-', '')`
  yield* sql`ALTER TABLE submissions ALTER COLUMN id SET NOT NULL`
  yield* sql`CREATE UNIQUE INDEX submissions_id ON submissions (id)`
  // Serves a file's feed in seq order without a sort.
  yield* sql`CREATE INDEX submissions_file_seq ON submissions (file_id, seq)`
  // An erasure's seq comes from the submissions' counter (`takeSeqs` draws it and the erasure inserts it); the
  // DEFAULT names the same sequence, as a regclass bound when the table is made, for any other insert.
  yield* sql`CREATE TABLE submission_erasures (
    seq int8 PRIMARY KEY DEFAULT nextval('submissions_seq_seq'::regclass),
    file_id text NOT NULL REFERENCES files (id),
    submission_id text NOT NULL
  )`
  yield* sql`CREATE INDEX submission_erasures_file_seq ON submission_erasures (file_id, seq)`
  yield* afterErasuresInsert({
    trigger: "submission_erasures_advance_read_point",
    function: "advance_read_point_after_erasure",
    settings: "SET search_path FROM CURRENT",
    statement: "UPDATE submission_read_point SET seq = greatest(seq, (SELECT max(seq) FROM submission_erasures))"
  })
  yield* afterErasuresInsert({
    trigger: "submission_erasures_notify",
    function: "notify_submissions_erased",
    statement: `PERFORM pg_notify('${submissionsChannel}', 'erased')`
  })
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

// Any fixed number works; only this adapter's migrations take it.
const LOCK_KEY = 7_305_164_211

/**
 * Brings the database to the latest schema; migrations already applied are skipped, so it is idempotent.
 * Instances starting together take turns: the Migrator creates its table before it locks it, and two
 * instances racing to create it would fail, so everything runs in one transaction under an advisory lock. A
 * database made before the initial schema is refused (`SqlMigrations.run`).
 *
 * @since 0.1.0
 * @category migrations
 */
export const run: SqlMigrations.Run = SqlMigrations.run({
  loader,
  prepare: () => Effect.void,
  lock: (sql) =>
    Effect.all(
      [
        // An index built by a later version may outlast a request's budget; the next instance waits for it.
        sql`SET LOCAL statement_timeout = 0`,
        sql`SELECT pg_advisory_xact_lock(${LOCK_KEY}::int8)`,
        // The Migrator's own definition. Made here, since its probe for the table would abort the transaction.
        sql`CREATE TABLE IF NOT EXISTS ${sql(SqlMigrations.table)} (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
      ],
      { discard: true }
    )
})
