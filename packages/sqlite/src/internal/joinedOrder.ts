import Database from "better-sqlite3"

// Rows inserted far from reply order, with ties, over more than one page.
const ROWS = 64
const LIMIT = 24

/**
 * Whether the SQLite library in use joins a page read by `sql` (a statement of the shape of
 * `SqliteFileRepository`'s joined page, `LIMIT` given as its argument) in reply order. SQLite does not document
 * that an aggregate takes the rows of an ordered FROM-subquery in their order, so this runs the same text on a
 * scratch database in memory before the adapter relies on it: a library that plans the statement otherwise is
 * found when the repository is made, not by a client reading a reply out of order.
 *
 * @internal
 */
export const holds = (sql: (limit: string) => string): boolean => {
  const db = new Database(":memory:")
  try {
    db.exec(`CREATE TABLE submissions (seq INTEGER PRIMARY KEY AUTOINCREMENT, file_id TEXT NOT NULL,
      created_date INTEGER NOT NULL, entry TEXT);
      CREATE INDEX submissions_file_created_seq ON submissions (file_id, created_date, seq)`)
    const insert = db.prepare("INSERT INTO submissions (file_id, created_date, entry) VALUES (?, ?, ?)")
    const rows: Array<{ readonly createdDate: number; readonly seq: number; readonly entry: string }> = []
    for (let i = 0; i < ROWS; i++) {
      const createdDate = (i * 29) % 17
      const entry = `{"i":${i}}`
      const seq = Number(insert.run("f", createdDate, entry).lastInsertRowid)
      rows.push({ createdDate, seq, entry })
    }
    rows.sort((a, b) => a.createdDate - b.createdDate || a.seq - b.seq)
    const page = db.prepare<Array<number | string>, [joined: Buffer | null, count: number]>(sql(String(LIMIT))).raw()
    const max = Number.MAX_SAFE_INTEGER
    const [joined, count] = page.get("f", -1, -1, -1, 0, max, max) ?? [null, 0]
    const expected = rows.slice(0, LIMIT).map((row) => row.entry)
    return count === LIMIT && joined !== null && joined.toString("utf8") === expected.join(",")
  } catch {
    return false
  } finally {
    db.close()
  }
}
