import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"

/**
 * Epoch milliseconds as a `timestamptz`. Whole seconds times 10^6 are exact in a double over the whole
 * 0000-9999 range while milliseconds times 10^3 are not near year 9999, so the two parts travel apart;
 * neither addition depends on the session's time zone.
 *
 * @internal
 */
export const instant = (sql: SqlClient.SqlClient, epochMillis: number): Statement.Fragment => {
  const seconds = Math.floor(epochMillis / 1000)
  return sql`(to_timestamp(${seconds}::float8) + ${epochMillis - seconds * 1000}::int * interval '1 millisecond')`
}

/**
 * A `timestamptz` column read back as epoch milliseconds. `extract` is exact (numeric) from PostgreSQL 14
 * and the cast rounds, so stored milliseconds come back unchanged; int8 arrives as a string.
 *
 * @internal
 */
export const epochMillis = (sql: SqlClient.SqlClient, column: string): Statement.Fragment =>
  sql`(extract(epoch from ${sql(column)}) * 1000)::int8`

// SQLSTATEs of a session that is gone: the connection exception class, and the server ending the session
// (admin_shutdown on pg_terminate_backend or a fast shutdown, crash_shutdown).
const LOST_STATE = /^(08...|57P01|57P02)$/
// What the driver reports when the socket itself goes.
const LOST_SOCKET = new Set(["ECONNRESET", "EPIPE"])
const LOST_MESSAGE = /^Connection terminated|is not queryable$/

/**
 * Whether a statement failed because its connection was lost (the server ended the session, or the socket
 * went), which a fresh connection may not suffer; not any other failure of the statement, nor a connection
 * that could not be opened at all.
 *
 * @internal
 */
export const lostConnection = (error: SqlError): boolean => {
  const cause: unknown = error.cause
  if (typeof cause !== "object" || cause === null) return false
  const { code, message } = cause as { readonly code?: unknown; readonly message?: unknown }
  if (typeof code === "string" && (LOST_STATE.test(code) || LOST_SOCKET.has(code))) return true
  return typeof message === "string" && LOST_MESSAGE.test(message)
}
