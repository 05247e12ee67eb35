/**
 * What an SQL engine does its own way, and nothing else: the rest of the storage is `SqlOperatorStore`.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import type * as Effect from "effect/Effect"

/**
 * A submission on its way through the staging table of an import or an append: `id` the id it is stored
 * under (`SubmissionId`), `file` its file's index in the document's `$.files`, `entry` the submission as the
 * reply writes it, `csv` and `csvWidth` its CSV row as an
 * export writes it (`ExportEncoder.StoredCsvRow`).
 *
 * @since 0.1.0
 * @category models
 */
export interface StagedSubmission {
  readonly id: string
  readonly file: number
  readonly createdDate: number
  readonly content: string
  readonly entry: string
  readonly csv: string
  readonly csvWidth: number
}

/**
 * Where the submissions of an import or an append wait until the whole document is read and checked: a
 * file's id may come after its submissions (and, in a fixture, its user after the file), and rows referring
 * to them cannot be written before. Two temporary tables: `import_submissions`, and
 * `import_files (file_index, id)`, which the store fills.
 *
 * @since 0.1.0
 * @category models
 */
export interface Staging {
  /** Creates both tables, first in the transaction after its lock, with whatever else a transaction that lasts as long as its stream needs. */
  readonly open: Effect.Effect<void, SqlError>
  /** Adds a batch of submissions, in document order. */
  readonly insert: (submissions: ReadonlyArray<StagedSubmission>) => Effect.Effect<void, SqlError>
  /**
   * Renders again the CSV row of each staged submission of the file at `file` in `$.files`, from its instant
   * (epoch milliseconds) and content, a few thousand rows at a time (`ContentNames.plan`).
   *
   * @since 0.2.0
   */
  readonly restage: (
    file: number,
    render: (createdDate: number, content: string) => { readonly text: string; readonly width: number }
  ) => Effect.Effect<void, SqlError>
  /** Copies the staged rows into `submissions` in staging order, which is document order, so `seq` breaks `createdDate` ties the way the fixture lists them. */
  readonly copy: Effect.Effect<void, SqlError>
  /**
   * After the copy of `copied` submissions, before the commit, where the engine's planner needs it: PostgreSQL
   * refreshes the table's statistics after a big write (docs/performance.md#postgresql-pages-in-index-order).
   *
   * @since 0.2.0
   */
  readonly settle?: ((copied: number) => Effect.Effect<void, SqlError>) | undefined
  /** Removes both tables before a successful commit, where the engine does not. */
  readonly close: Effect.Effect<void, SqlError>
}

/**
 * The SQL fragments and statements in which two engines differ, over one client.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqlDialect {
  /** An instant given as epoch milliseconds, as the engine stores one. */
  readonly instant: (epochMillis: number) => Statement.Fragment
  /** A column of instants read back as epoch milliseconds (a number, or an int8 as text). */
  readonly epochMillis: (column: string) => Statement.Fragment
  /** A boolean as a column stores it. */
  readonly boolean: (value: boolean) => Statement.Fragment
  /** An integer for an int8 column, from a number or from text of digits (a key id). */
  readonly int8: (value: number | string) => Statement.Fragment
  /** First in every write transaction: writers take turns, so what a transaction checked still holds when it writes. */
  readonly writeLock: Effect.Effect<void, SqlError>
  /** After a claim's SELECT: rows another transaction has locked are passed over, not waited for (none where writers take turns). */
  readonly skipLocked: Statement.Fragment
  /** First in a claim's transaction: the write lock where writers take turns, nothing where `skipLocked` lets claims run side by side. */
  readonly claimLock: Effect.Effect<void, SqlError>
  /** The staging tables of imports and appends. */
  readonly staging: Staging
  /**
   * Where a submission's stored content has exactly `value` under `name` (an erasure's `--where`): both are
   * bound as parameters, never spliced into the SQL.
   *
   * @since 0.3.0
   */
  readonly contentHas: (name: string, value: string) => Statement.Fragment
  /**
   * `count` new feed positions for an erasure's changes, ascending, from the counter the submissions' `seq`
   * comes from, so created and erased changes share one order; under the write lock.
   *
   * @since 0.3.0
   */
  readonly takeSeqs: (count: number) => Effect.Effect<ReadonlyArray<string>, SqlError>
  /**
   * First in an erasure's transaction, once it holds the write lock: what an operator command that may scan a
   * whole file needs of the engine (PostgreSQL lifts the requests' statement timeout). None: nothing.
   *
   * @since 0.3.0
   */
  readonly beforeErasure?: Effect.Effect<void, SqlError> | undefined
  /**
   * After an erasure has committed, outside its transaction: what takes the erased text out of the engine's
   * files where a commit alone leaves it (SQLite's WAL). Best effort; it says whether it got all of it.
   *
   * @since 0.3.0
   */
  readonly afterErasure?: Effect.Effect<boolean, SqlError> | undefined
}

/**
 * A dialect over the client it runs on.
 *
 * @since 0.1.0
 * @category models
 */
export type Make = (sql: SqlClient.SqlClient) => SqlDialect
