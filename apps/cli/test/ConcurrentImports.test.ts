// Two imports at once, from two processes, on one SQLite file: the second writer waits for the first
// instead of failing with "database is locked", from the migrations of a fresh file to the last commit.

import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Processes, SqliteFiles } from "@filedata/testing"
import { runInProcess } from "./utils.js"

const { finish, killLeftovers, startBuilt } = Processes
const { snapshot } = SqliteFiles

// Enough submissions that the two imports overlap: each reads and stages for a while before it writes. With the
// imports' write lock taken out again, 500 failed as many rounds as 2,000 did (13 and 12 of 30).
const SUBMISSIONS = 500

const document = (user: string, file: string) => ({
  users: [{ id: user, apiKeys: [`${user}-key`] }],
  files: [
    {
      id: file,
      userId: user,
      name: file,
      creationDate: "2024-01-01T00:00:00.000Z",
      submissions: Array.from({ length: SUBMISSIONS }, (_, i) => ({
        createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
        content: { n: String(i) }
      }))
    }
  ]
})

// Before imports took the write lock first, about two rounds in five failed.
const ROUNDS = 10

const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "filedata-concurrent-"))
  dirs.push(dir)
  return dir
}

// A migrated, empty database to start rounds from, so both imports start at once rather than one after
// the other's migration; migrated in-process, as main migrates it.
let migrated = ""

/**
 * Runs `filedata import` on both documents at once against a database file of their own: a copy of
 * `from`, or a file that does not exist yet. Returns both outcomes and what the database holds after.
 */
const importBoth = async (first: unknown, second: unknown, from?: string) => {
  const dir = tempDir()
  const filename = join(dir, "filedata.db")
  if (from !== undefined) copyFileSync(from, filename)
  const env = { DATABASE_URL: `file:${filename}` }
  const write = (name: string, content: unknown) => {
    writeFileSync(join(dir, name), JSON.stringify(content))
    return join(dir, name)
  }
  const paths = [write("first.json", first), write("second.json", second)]
  const results = await Promise.all(paths.map((path) => finish(startBuilt("cli", ["import", path], env))))
  return { results, database: snapshot(filename) }
}

afterEach(killLeftovers)

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe("two imports at once on one SQLite file (real processes)", () => {
  beforeAll(async () => {
    migrated = join(tempDir(), "migrated.db")
    const created = await runInProcess(["key", "list"], { DATABASE_URL: `file:${migrated}` })
    if (created.code !== 0) throw new Error(created.stderr)
  }, 180_000)

  it("both succeed: the second waits for the first's lock", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { results, database } = await importBoth(document("alice", "a-file"), document("bob", "b-file"), migrated)
      for (const result of results) expect(result.code, `round ${round}: ${result.stderr}`).toBe(0)
      expect(database.tables.users?.rows).toBe(2)
      expect(database.tables.submissions?.rows).toBe(2 * SUBMISSIONS)
    }
  }, 120_000)

  it("on a file that does not exist yet, both migrate it and import, one after the other", async () => {
    for (let round = 0; round < 3; round++) {
      const { results, database } = await importBoth(document("alice", "a-file"), document("bob", "b-file"))
      for (const result of results) expect(result.code, `round ${round}: ${result.stderr}`).toBe(0)
      // Each migration recorded once, as one process alone records them.
      expect(database.tables.effect_sql_migrations?.rows).toBe(snapshot(migrated).tables.effect_sql_migrations?.rows)
      expect(database.tables.submissions?.rows).toBe(2 * SUBMISSIONS)
    }
  }, 60_000)

  it("a clash between them is reported by path by the one that comes second, never half written", async () => {
    for (let round = 0; round < 3; round++) {
      const { results, database } = await importBoth(document("carol", "c-file"), document("carol", "d-file"), migrated)
      const failed = results.filter((result) => result.code !== 0)
      expect(failed, results.map((result) => result.stderr).join("\n")).toHaveLength(1)
      expect(failed[0]?.stderr).toContain("$.users[0].id: already exists")
      expect(database.tables.users?.rows).toBe(1)
      expect(database.tables.files?.rows).toBe(1)
      expect(database.tables.submissions?.rows).toBe(SUBMISSIONS)
    }
  }, 60_000)
})
