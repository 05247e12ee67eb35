import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Effect from "effect/Effect"

/**
 * Takes the database's write lock at the start of a transaction, waiting up to `busy_timeout` for it.
 * The client begins every transaction deferred, and a deferred transaction that has read asks for the lock
 * only at its first write, where SQLite refuses at once ("database is locked") instead of waiting. A
 * statement that writes asks for the lock before it does anything, even one that deletes no row; so it
 * does what `BEGIN IMMEDIATE` would.
 *
 * @internal
 */
export const writeLock = (sql: SqlClient.SqlClient, table: string): Effect.Effect<void, SqlError> =>
  sql`DELETE FROM ${sql(table)} WHERE false`
