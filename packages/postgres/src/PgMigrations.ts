/**
 * The schema of the PostgreSQL adapter, as @effect/sql migrations.
 *
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SubmissionEntry } from "@filedata/core"
import { ContentNames, SqlMigrations, SqlWebhookStore } from "@filedata/sql"
import * as Effect from "effect/Effect"
import { epochMillis } from "./internal/storage.js"

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
// submissions, in that statement's transaction: every writer runs it, whatever its release.
const afterSubmissionsInsert = (options: {
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
    yield* sql.unsafe(`CREATE TRIGGER ${options.trigger} AFTER INSERT ON submissions
    FOR EACH STATEMENT EXECUTE FUNCTION ${options.function}()`)
  })

const createTables = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE users (
    id text PRIMARY KEY
  )`
  // Only the SHA-256 of a key is kept: a copy of the database gives no usable key.
  yield* sql`CREATE TABLE api_keys (
    id bigserial PRIMARY KEY,
    user_id text NOT NULL REFERENCES users (id),
    key_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
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
  // jsonb: jsonb reorders keys and drops duplicates, and the reply splices the imported text in as is.
  yield* sql`CREATE TABLE submissions (
    seq bigserial PRIMARY KEY,
    file_id text NOT NULL REFERENCES files (id),
    created_date timestamptz NOT NULL,
    content text NOT NULL
  )`
  // Serves the keyset pages of a file's submissions in reply order without a sort.
  yield* sql`CREATE INDEX submissions_file_created_seq ON submissions (file_id, created_date, seq)`
})

// Rows converted per step below, so a table of a million submissions converts in bounded memory.
const CONVERT_BATCH = 5000

// entry is a submission as the reply writes it, rendered once at import instead of on every read
// (docs/performance.md#stored-reply-entries). Existing rows are rendered here by the core's own function rather than in SQL, so
// stored and newly imported entries cannot differ by a character. seq and created_date are left as they
// are, so reply order and tie order do not change.
// content stays and entry is nullable: in a rolling deploy older instances still read and write content
// (docs/operations.md), and rows an older release imports meanwhile have no entry. A later release
// backfills those, then sets entry NOT NULL and drops content.
const submissionEntries = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE submissions ADD COLUMN entry text`
  // seq stays the driver's text, as on reads: it only goes back as an int8 parameter.
  let last = "0"
  for (;;) {
    const rows = yield* sql<{
      readonly seq: string
      readonly created_date: string
      readonly content: string
    }>`SELECT seq, ${epochMillis(sql, "created_date")} AS created_date, content FROM submissions
      WHERE seq > ${last}::int8 ORDER BY seq LIMIT ${CONVERT_BATCH}`
    const end = rows[rows.length - 1]
    if (end === undefined) break
    // One statement per step: the batch travels as two array parameters, as the import stages submissions.
    yield* sql`UPDATE submissions SET entry = u.entry
      FROM unnest(
        ${rows.map((row) => row.seq)}::int8[],
        ${rows.map((row) => SubmissionEntry.render(Number(row.created_date), row.content))}::text[]
      ) AS u (seq, entry)
      WHERE submissions.seq = u.seq`
    last = end.seq
  }
})

// The first characters of each key, kept at creation so an operator can match a leaked key to its id
// (ApiKeyPrefix). Expand only (docs/operations.md): nullable, since the keys stored so far are kept only as
// hashes and cannot get one, and instances of the previous release create keys without it meanwhile.
const apiKeyPrefixes = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN key_prefix text`
})

// The read point of a reply (`FileRepository.FoundFile`), the highest seq committed, kept in a row that each
// statement inserting submissions moves up in its own transaction, by a trigger, so writers of a release that
// knows nothing of it keep it too. Neither `max(seq)` nor the sequence will do for readers:
// docs/performance.md#read-point-kept-by-the-writer. Inside the writer, `max(seq)` finds its own rows first:
// writers take turns (PgOperatorStore's write lock), so no higher seq is in flight and seq order is commit order.
const submissionReadPoint = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE submission_read_point (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    seq int8 NOT NULL
  )`
  yield* sql`INSERT INTO submission_read_point (seq) SELECT coalesce(max(seq), 0) FROM submissions`
  yield* afterSubmissionsInsert({
    trigger: "submissions_advance_read_point",
    function: "advance_submission_read_point",
    // The tables are found where the migration found them, whatever a writer's search_path.
    settings: "SET search_path FROM CURRENT",
    statement: "UPDATE submission_read_point SET seq = greatest(seq, (SELECT max(seq) FROM submissions))"
  })
})

// Numbered 7 (`SqlWebhookStore.migration`): 5 and 6 belong to other releases' changes, and the numbers keep one
// meaning across the adapters.
const webhooks = Effect.flatMap(SqlClient.SqlClient, (sql) => SqlWebhookStore.migration(sql, columnTypes))

// Numbered 6 on both adapters (`ContentNames.migration`); 7 is the webhooks'.
const contentNames = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  ContentNames.migration(sql, columnTypes, (value) => sql`${value}::int8`)
)

/**
 * The channel on which every committed insert of submissions is announced (migration 8).
 *
 * @since 0.2.0
 * @category migrations
 */
export const submissionsChannel = "filedata_submissions"

// Waiting requests of every instance hear of an append when it commits: a notification sent in the inserting
// transaction (so only if it commits, and after it did), from a trigger, so every writer sends it. Its payload
// is fixed (PostgreSQL folds equal notifications of one transaction into one); the listener looks at storage
// for what changed, and its bounded poll covers a notification lost with a connection.
const submissionNotify = afterSubmissionsInsert({
  trigger: "submissions_notify",
  function: "notify_submissions_appended",
  statement: `PERFORM pg_notify('${submissionsChannel}', 'appended')`
})

// Each submission's CSV row as an export writes it (`ExportEncoder.StoredCsvRow`), rendered once here and at
// import and append by the core's own function, so an export reads it as the reply reads entries
// (docs/performance.md#export-rows-rendered-at-import). Expand only: rows an instance of the previous release
// writes meanwhile have none, nor does a row whose names its file does not list; reads render those themselves.
// Numbered 9 on both adapters.
const csvRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE submissions ADD COLUMN csv text, ADD COLUMN csv_width int4`
  yield* ContentNames.backfillCsvRows(
    sql,
    (value) => sql`${value}::int8`,
    (column) => epochMillis(sql, column),
    (rows) =>
      sql`UPDATE submissions SET csv = u.csv, csv_width = u.width
        FROM unnest(
          ${rows.map(([seq]) => String(seq))}::int8[],
          ${rows.map(([, text]) => text)}::text[],
          ${rows.map(([, , width]) => width)}::int4[]
        ) AS u (seq, csv, width)
        WHERE submissions.seq = u.seq`
  )
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
  "4_submission_read_point": submissionReadPoint,
  "6_content_names": contentNames,
  "7_webhooks": webhooks,
  "8_submission_notify": submissionNotify,
  "9_csv_rows": csvRows
})

// Any fixed number works; only this adapter's migrations take it.
const LOCK_KEY = 7_305_164_211

/**
 * Brings the database to the latest schema; migrations already applied are skipped, so it is idempotent.
 * Instances starting together take turns: the Migrator creates its table before it locks it, and two
 * instances racing to create it would fail, so everything runs in one transaction under an advisory lock.
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
        // An index built by a later release may outlast a request's budget; the next instance waits for it.
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
