import { describe, expect, it } from "vitest"
import * as JoinedOrder from "../src/internal/joinedOrder.js"

const RANGE =
  "file_id = ? AND created_date >= ? AND (created_date > ? OR (created_date = ? AND seq > ?))" +
  " AND created_date < ? AND seq <= ?"

describe("JoinedOrder", () => {
  it("finds the library in use joining an ordered subquery's rows in its order", () => {
    expect(
      JoinedOrder.holds(
        (limit) => `SELECT CAST(group_concat(entry, ',') AS BLOB), count(*), max(created_date)
          FROM (SELECT entry, created_date FROM submissions WHERE ${RANGE} ORDER BY created_date, seq LIMIT ${limit})`
      )
    ).toBe(true)
  })

  it("finds a statement that joins rows in another order, or that fails, out", () => {
    // Without the subquery's ORDER BY the rows come in the index's order, not the reply's.
    expect(
      JoinedOrder.holds(
        (limit) => `SELECT CAST(group_concat(entry, ',') AS BLOB), count(*)
          FROM (SELECT entry FROM submissions WHERE ${RANGE} ORDER BY seq LIMIT ${limit})`
      )
    ).toBe(false)
    expect(
      JoinedOrder.holds(
        (limit) => `SELECT CAST(group_concat(entry, ',') AS BLOB), count(*) FROM nowhere LIMIT ${limit}`
      )
    ).toBe(false)
  })
})
