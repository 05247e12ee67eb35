import type * as SqlClient from "@effect/sql/SqlClient"
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

/**
 * PostgreSQL text cannot hold U+0000, so no stored id contains it and a lookup of one is a plain miss.
 *
 * @internal
 */
export const storable = (text: string): boolean => !text.includes("\u0000")
