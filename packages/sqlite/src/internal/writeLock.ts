import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

/**
 * How long a write waits for another process's write lock before it fails as `StorageUnavailable`.
 *
 * @internal
 */
export const busyWaitMillis = 5_000

/**
 * How a write waits for another process's lock: SQLite's own busy handler sleeps the thread, and with it every
 * request and delivery of the process, so the connection answers "busy" at once (busy_timeout 0) and the wait
 * is this timer, for up to `busyWaitMillis`.
 *
 * @internal
 */
export const busyWait = Schedule.spaced("1 millis").pipe(Schedule.jittered, Schedule.upTo(`${busyWaitMillis} millis`))

/**
 * Whether better-sqlite3 refused for another connection's lock (`SQLITE_BUSY` and its extended codes).
 *
 * @internal
 */
export const isBusyError = (error: unknown): boolean => {
  const code = (error as { readonly code?: unknown } | undefined)?.code
  return typeof code === "string" && code.startsWith("SQLITE_BUSY")
}

const isBusy = (error: SqlError): boolean => isBusyError(error.cause)

/**
 * Takes the database's write lock at the start of a transaction, waiting up to `busyWaitMillis` for it without
 * blocking the thread. The client begins every transaction deferred, and a deferred transaction that has read
 * asks for the lock only at its first write, where SQLite refuses at once ("database is locked") instead of
 * waiting. A statement that writes asks for the lock before it does anything, even one that deletes no row; so
 * it does what `BEGIN IMMEDIATE` would. Refused, it leaves the transaction open with no snapshot, so it is
 * simply run again.
 *
 * @internal
 */
export const writeLock = (sql: SqlClient.SqlClient, table: string): Effect.Effect<void, SqlError> =>
  Effect.retry(sql`DELETE FROM ${sql(table)} WHERE false`, { schedule: busyWait, while: isBusy })
