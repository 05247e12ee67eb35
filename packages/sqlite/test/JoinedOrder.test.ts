import { describe, expect, it } from "vitest"
import * as JoinedOrder from "../src/internal/joinedOrder.js"
import { joinedChangesSql } from "../src/internal/statements.js"

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

  it("finds the library in use joining the feed's merged rows in seq order, and a statement that does not out", () => {
    expect(JoinedOrder.changesHold(joinedChangesSql)).toBe(true)
    // Erasures first, then submissions: each table in order, the feed not.
    expect(
      JoinedOrder.changesHold(
        (limit) => `SELECT CAST(group_concat(change, ',') AS BLOB), count(*) FROM (SELECT * FROM (
          SELECT 1 AS part, seq, '{"type":"submission.erased","id":"' || submission_id || '"}' AS change
            FROM submission_erasures WHERE file_id = ? AND seq > ? AND seq <= ?
          UNION ALL SELECT 2, seq, '{"type":"submission.created","id":"' || id || '",' || substr(entry, 2)
            FROM submissions WHERE file_id = ? AND seq > ? AND seq <= ?) ORDER BY part, seq LIMIT ${limit})`
      )
    ).toBe(false)
  })
})
