// The database file as an operator or a fault handles it from outside the service: copies, removals,
// restores, a connection of another process, and a snapshot of everything it holds.
import { createHash } from "node:crypto"
import { copyFileSync, renameSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { root } from "./Processes.js"

/** The few calls of a `better-sqlite3` connection these tests make. */
export interface Connection {
  exec(sql: string): void
  pragma(sql: string, options?: { readonly simple: boolean }): unknown
  prepare(sql: string): { all(...parameters: ReadonlyArray<unknown>): Array<Record<string, unknown>> }
  close(): void
}

// The SQLite adapter's own driver, reached through that package: the apps' tests do not depend on it directly.
const Database = createRequire(join(root, "packages/sqlite/package.json"))("better-sqlite3") as new (
  filename: string,
  options?: { readonly readonly?: boolean; readonly timeout?: number }
) => Connection

/** A connection of this process, which is another process than the service's. */
export const connect = (filename: string, options?: { readonly readonly?: boolean; readonly timeout?: number }) =>
  new Database(filename, options)

const SIDE_FILES = ["-wal", "-shm", "-journal"]

/** A consistent copy on its own, as a backup tool makes it (rollback-journal mode, no -wal or -shm). */
export const backup = (filename: string, target: string): void => {
  const db = connect(filename, { readonly: true })
  try {
    db.exec(`VACUUM INTO '${target.replaceAll("'", "''")}'`)
  } finally {
    db.close()
  }
}

/** Removes the database and its side files, as `rm filedata.db*` does. */
export const remove = (filename: string): void => {
  for (const suffix of ["", ...SIDE_FILES]) rmSync(`${filename}${suffix}`, { force: true, recursive: true })
}

/** Puts a copy of `source` at `filename` as a restore should: renamed into place, with no side files of another. */
export const restore = (source: string, filename: string): void => {
  remove(filename)
  copyFileSync(source, `${filename}.restoring`)
  renameSync(`${filename}.restoring`, filename)
}

/** Everything the database holds: its schema, and each table's row count and SHA-256 over all its rows. */
export const snapshot = (filename: string) => {
  const db = connect(filename, { readonly: true })
  try {
    const schema = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name").all()
    const tables: Record<string, { readonly rows: number; readonly sha256: string }> = {}
    for (const { name } of schema.filter((entry) => entry.type === "table")) {
      const quoted = `"${String(name).replaceAll('"', '""')}"`
      const hash = createHash("sha256")
      const rows = db.prepare(`SELECT * FROM ${quoted} ORDER BY rowid`).all()
      for (const row of rows) hash.update(JSON.stringify(row)).update("\n")
      tables[String(name)] = { rows: rows.length, sha256: hash.digest("hex") }
    }
    return { schema, tables, integrity: db.pragma("integrity_check", { simple: true }) }
  } finally {
    db.close()
  }
}

/** A fixture file `bulk` of user `bulk` with `count` submissions a second apart, each with `words` of filler. */
export const bulkFile = (count: number, words: number) => ({
  id: "bulk",
  userId: "bulk",
  name: "Bulk",
  creationDate: "2024-01-01T00:00:00.000Z",
  submissions: Array.from({ length: count }, (_, i) => ({
    createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    content: { n: String(i), text: "lorem ipsum dolor sit amet ".repeat(words) }
  }))
})
