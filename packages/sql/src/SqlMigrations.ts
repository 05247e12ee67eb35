/**
 * Migrations that processes starting together run one after the other, on any engine.
 *
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/**
 * The Migrator's table of applied migrations.
 *
 * @since 0.1.0
 * @category constants
 */
export const table = "effect_sql_migrations"

/**
 * How an engine spells the columns of the tables both adapters create alike, so that their DDL is written once
 * (`ContentNames.migration`, `SqlWebhookStore.migration`). That DDL keeps the text, indentation included, each
 * adapter ran before: SQLite stores a table's text as written.
 *
 * @since 0.2.0
 * @category models
 */
export interface ColumnTypes {
  readonly text: string
  readonly int4: string
  readonly int8: string
  /** `timestamptz`, or epoch milliseconds. */
  readonly instant: string
  /** A text primary key. */
  readonly textKey: string
  /** An int8 primary key that grows with insertion and never takes a value again. */
  readonly serialKey: string
  /** A boolean that is never NULL, by its column's name: SQLite has no booleans, so it checks an integer. */
  readonly boolean: (column: string) => string
  /** What follows a table's closing parenthesis. */
  readonly tableOptions: string
}

// The engines' own migrators only add schema dumps through command-line tools (sqlite3, pg_dump), which
// are not used here and would drag in FileSystem, Path and CommandExecutor.
const migrate = Migrator.make({})

/**
 * Running the migrations: what each applied, by id and name.
 *
 * @since 0.1.0
 * @category models
 */
export type Run = Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
>

/**
 * Brings the database to the latest schema of `loader`; migrations already applied are skipped, so it is
 * idempotent. `prepare` runs first, on its own; then one transaction runs `lock`, which makes every other
 * process wait until it ends, and the Migrator, so a process that waited finds nothing left to do.
 *
 * @since 0.1.0
 * @category migrations
 */
export const run = (options: {
  readonly loader: Migrator.Loader
  readonly prepare: (sql: SqlClient.SqlClient) => Effect.Effect<void, SqlError>
  readonly lock: (sql: SqlClient.SqlClient) => Effect.Effect<void, SqlError>
}): Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* options.prepare(sql)
    return yield* sql.withTransaction(Effect.zipRight(options.lock(sql), migrate({ loader: options.loader, table })))
  })
