// The import the plain way, for `pnpm bench`'s import rows: a fixture loaded into a fresh SQLite file with
// better-sqlite3, written for speed, over the same schema filedata's migrations make (entries included), in one
// transaction. Not shipped; only measured against (docs/performance.md#the-baseline).
//
// The file is read and parsed whole (`JSON.parse`), so its memory grows with the fixture; filedata's import
// streams in bounded memory. It checks what it needs to write correct rows (types, instants, string values) and
// leaves ids used twice, keys in use and unknown owners to the schema's constraints; any error rolls back.
// Usage: node bench/baseline-import.mjs DB_PATH FIXTURE.json

import { hash } from "node:crypto"
import { readFileSync } from "node:fs"
import Database from "better-sqlite3"

const [dbPath, fixturePath] = process.argv.slice(2)
const db = new Database(dbPath)
db.pragma("journal_mode = WAL")
db.pragma("foreign_keys = ON")
// The schema of filedata's SQLite migrations 1 and 2 (packages/sqlite/src/SqliteMigrations.ts).
db.exec(`
  CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS api_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL REFERENCES users (id),
    key_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  ) STRICT;
  CREATE INDEX IF NOT EXISTS api_keys_user_id ON api_keys (user_id, id);
  CREATE TABLE IF NOT EXISTS files (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL REFERENCES users (id),
    name TEXT NOT NULL,
    creation_date INTEGER NOT NULL,
    public_availability INTEGER NOT NULL CHECK (public_availability IN (0, 1)),
    submission_counter INTEGER NOT NULL CHECK (submission_counter >= 0),
    visit_counter INTEGER NOT NULL CHECK (visit_counter >= 0)
  ) STRICT;
  CREATE TABLE IF NOT EXISTS submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    file_id TEXT NOT NULL REFERENCES files (id),
    created_date INTEGER NOT NULL,
    content TEXT NOT NULL,
    entry TEXT
  ) STRICT;
  CREATE INDEX IF NOT EXISTS submissions_file_created_seq ON submissions (file_id, created_date, seq);
`)

const fail = (path, detail) => {
  throw new Error(`${path}: ${detail}`)
}
const text = (value, path) => (typeof value === "string" && value !== "" ? value : fail(path, "must be a string"))
const list = (value, path) => (Array.isArray(value) ? value : fail(path, "must be an array"))
const instant = (value, path) => {
  const millis = typeof value === "string" ? Date.parse(value) : Number.NaN
  return Number.isNaN(millis) ? fail(path, "must be an ISO 8601 date-time") : millis
}

const insertUser = db.prepare("INSERT INTO users (id) VALUES (?)")
const insertKey = db.prepare("INSERT INTO api_keys (user_id, key_hash, created_at) VALUES (?, ?, ?)")
const insertFile = db.prepare(
  `INSERT INTO files (id, user_id, name, creation_date, public_availability, submission_counter, visit_counter)
   VALUES (?, ?, ?, ?, ?, ?, ?)`
)
// Rows per statement: one call into SQLite for many rows, the measured fastest (4 variables a row, far below
// SQLite's limit of 32766).
const BATCH = 250
const insertMany = db.prepare(
  `INSERT INTO submissions (file_id, created_date, content, entry) VALUES ${Array(BATCH).fill("(?, ?, ?, ?)").join(",")}`
)
const insertOne = db.prepare("INSERT INTO submissions (file_id, created_date, content, entry) VALUES (?, ?, ?, ?)")

const load = db.transaction((fixture) => {
  const now = Date.now()
  for (const [u, user] of list(fixture.users ?? [], "$.users").entries()) {
    const id = text(user.id, `$.users[${u}].id`)
    insertUser.run(id)
    for (const [k, key] of list(user.apiKeys ?? [], `$.users[${u}].apiKeys`).entries()) {
      insertKey.run(id, hash("sha256", text(key, `$.users[${u}].apiKeys[${k}]`), "hex"), now)
    }
  }
  let count = 0
  for (const [f, file] of list(fixture.files ?? [], "$.files").entries()) {
    const at = `$.files[${f}]`
    const id = text(file.id, `${at}.id`)
    const submissions = list(file.submissions ?? [], `${at}.submissions`)
    insertFile.run(
      id,
      text(file.userId, `${at}.userId`),
      typeof file.name === "string" ? file.name : fail(`${at}.name`, "must be a string"),
      instant(file.creationDate, `${at}.creationDate`),
      file.publicAvailability === true ? 1 : 0,
      file.SubmissionCounter ?? submissions.length,
      file.VisitCounter ?? 0
    )
    const batch = []
    for (let s = 0; s < submissions.length; s++) {
      const submission = submissions[s]
      const created = instant(submission.createdDate, `${at}.submissions[${s}].createdDate`)
      const { content } = submission
      if (typeof content !== "object" || content === null || Array.isArray(content))
        fail(`${at}.submissions[${s}].content`, "must be an object")
      for (const key in content)
        if (typeof content[key] !== "string") fail(`${at}.submissions[${s}].content.${key}`, "must be a string")
      const json = JSON.stringify(content)
      batch.push(id, created, json, `{"createdDate":"${new Date(created).toISOString()}","content":${json}}`)
      if (batch.length === BATCH * 4) {
        insertMany.run(batch)
        batch.length = 0
      }
    }
    for (let i = 0; i < batch.length; i += 4) insertOne.run(batch[i], batch[i + 1], batch[i + 2], batch[i + 3])
    count += submissions.length
  }
  return count
})

const began = performance.now()
const count = load(JSON.parse(readFileSync(fixturePath, "utf8")))
db.close()
console.log(`imported ${count} submissions in ${((performance.now() - began) / 1000).toFixed(2)} s`)
