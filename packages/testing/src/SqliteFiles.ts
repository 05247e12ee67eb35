/**
 * A SQLite database file as an operator or a fault handles it from outside the service: copies, removals,
 * restores, a connection of another process, and a snapshot of everything it holds.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import { copyFileSync, renameSync, rmSync } from "node:fs"
import Database from "better-sqlite3"

/**
 * A connection of this process, which is another process than the service's.
 *
 * @since 0.1.0
 * @category connections
 */
export const connect = (filename: string, options?: Database.Options): Database.Database =>
  new Database(filename, options)

const SIDE_FILES = ["-wal", "-shm", "-journal"]

/**
 * A consistent copy on its own, as a backup tool makes it (rollback-journal mode, no -wal or -shm).
 *
 * @since 0.1.0
 * @category files
 */
export const backup = (filename: string, target: string): void => {
  const db = connect(filename, { readonly: true })
  try {
    db.exec(`VACUUM INTO '${target.replaceAll("'", "''")}'`)
  } finally {
    db.close()
  }
}

/**
 * Removes the database and its side files, as `rm filedata.db*` does.
 *
 * @since 0.1.0
 * @category files
 */
export const remove = (filename: string): void => {
  for (const suffix of ["", ...SIDE_FILES]) rmSync(`${filename}${suffix}`, { force: true, recursive: true })
}

/**
 * Puts a copy of `source` at `filename` as a restore should: renamed into place, with no side files of another.
 *
 * @since 0.1.0
 * @category files
 */
export const restore = (source: string, filename: string): void => {
  remove(filename)
  copyFileSync(source, `${filename}.restoring`)
  renameSync(`${filename}.restoring`, filename)
}

/**
 * Everything the database holds: its schema, and each table's row count and SHA-256 over all its rows.
 *
 * @since 0.1.0
 * @category inspection
 */
export const snapshot = (filename: string) => {
  const db = connect(filename, { readonly: true })
  try {
    const schema = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name").all() as Array<
      Record<string, unknown>
    >
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
