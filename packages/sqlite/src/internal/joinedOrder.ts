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

/**
 * Whether the SQLite library in use joins a page of the change feed read by `sql` (the shape of
 * `joinedChangesSql`, `LIMIT` given as its argument) in seq order, the two tables' rows interleaved: checked as
 * {@link holds} checks a page of submissions.
 *
 * @internal
 */
export const changesHold = (sql: (limit: string) => string): boolean => {
  const db = new Database(":memory:")
  try {
    db.exec(`CREATE TABLE submissions (seq INTEGER PRIMARY KEY AUTOINCREMENT, file_id TEXT NOT NULL, id TEXT,
      entry TEXT);
      CREATE INDEX submissions_file_seq ON submissions (file_id, seq);
      CREATE TABLE submission_erasures (seq INTEGER PRIMARY KEY, file_id TEXT NOT NULL, submission_id TEXT);
      CREATE INDEX submission_erasures_file_seq ON submission_erasures (file_id, seq)`)
    const insert = db.prepare("INSERT INTO submissions (seq, file_id, id, entry) VALUES (?, ?, ?, ?)")
    const erase = db.prepare("INSERT INTO submission_erasures (seq, file_id, submission_id) VALUES (?, ?, ?)")
    const expected: Array<string> = []
    // Every third seq an erasure, the others submissions; another file's rows between, in both tables.
    for (let seq = 1; seq <= ROWS; seq++) {
      const file = seq % 5 === 0 ? "g" : "f"
      if (seq % 3 === 0) {
        erase.run(seq, file, `sub_${seq}`)
        if (file === "f") expected.push(`{"type":"submission.erased","id":"sub_${seq}"}`)
      } else {
        insert.run(seq, file, `sub_${seq}`, `{"i":${seq}}`)
        if (file === "f") expected.push(`{"type":"submission.created","id":"sub_${seq}","i":${seq}}`)
      }
    }
    const page = db.prepare<Array<number | string>, [joined: Buffer | null, count: number]>(sql(String(LIMIT))).raw()
    const max = Number.MAX_SAFE_INTEGER
    const [joined, count] = page.get("f", 0, max, "f", 0, max) ?? [null, 0]
    return count === LIMIT && joined !== null && joined.toString("utf8") === expected.slice(0, LIMIT).join(",")
  } catch {
    return false
  } finally {
    db.close()
  }
}
