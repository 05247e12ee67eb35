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
 * (`SharedTables`).
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

/**
 * Why a database made before the initial schema is refused, and what to do with it. Each adapter's loader starts
 * with `1_initial_schema`; builds before it (all 0.x, never published) recorded a chain of migrations from
 * `1_create_tables` on, which this version does not upgrade.
 *
 * @since 0.2.0
 * @category constants
 */
export const madeBeforeInitialSchema =
  "this database was created by filedata 0.x before its initial schema (its migrations table records " +
  "1_create_tables), and this version does not upgrade it: export the files you need with that version and " +
  "import them into a new database, or delete the database"

// Refuses a database whose recorded migrations are not all this version's own, before anything is migrated.
const checkRecorded = (sql: SqlClient.SqlClient, loader: Migrator.Loader) =>
  Effect.gen(function* () {
    const known = yield* loader
    const recorded = yield* sql<{ readonly migration_id: number; readonly name: string }>`
      SELECT migration_id, name FROM ${sql(table)} ORDER BY migration_id`
    const unknown = recorded.filter(
      (row) => !known.some(([id, name]) => id === Number(row.migration_id) && name === row.name)
    )
    if (unknown.length === 0) return
    return yield* new Migrator.MigrationError({
      reason: "bad-state",
      message: unknown.some((row) => Number(row.migration_id) === 1 && row.name === "create_tables")
        ? madeBeforeInitialSchema
        : `this database records migrations this version of filedata does not know (${unknown
            .map((row) => `${row.migration_id}_${row.name}`)
            .join(", ")}): it was made by another version; run that version, or delete the database`
    })
  })

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
 * process wait until it ends, and the Migrator, so a process that waited finds nothing left to do. A database
 * that records a migration `loader` does not have (one made before the initial schema) fails with a
 * `MigrationError` that says what to do, and nothing is changed.
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
    return yield* sql.withTransaction(
      Effect.zipRight(
        Effect.zipRight(options.lock(sql), checkRecorded(sql, options.loader)),
        migrate({ loader: options.loader, table })
      )
    )
  })
