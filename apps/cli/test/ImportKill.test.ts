// An import is one transaction: killed with SIGKILL while it writes, it leaves the database exactly as it
// was before it started, and the database stays healthy for the server and the next import. The import that is
// killed and the server run as real processes, the way an operator (or a fault script) runs them; the imports
// before and after it run in-process, as main runs them.

import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Conditions, Fixtures, Processes, SqliteFiles, TempDirectory } from "@filedata/testing"
import { runInProcess } from "./utils.js"

const { finish, killLeftovers, listening, post, startBuilt } = Processes
const { snapshot } = SqliteFiles

const baseline = Fixtures.aliceContact(["alice-key-5d0e2b"], {
  submissions: [
    { createdDate: "2024-01-02T09:30:00.000Z", content: { email: "a@example.com" } },
    { createdDate: "2024-01-03T09:30:00.000Z", content: { email: "b@example.com" } }
  ]
})

// Big enough that its import writes for a while (hundreds of milliseconds at least) after it starts writing.
const SUBMISSIONS = 200_000
const big = {
  users: [{ id: "bulk", apiKeys: ["bulk-key-81c4aa"] }],
  files: [Fixtures.bulkFile(SUBMISSIONS, 4)]
}

// The import is writing once its uncommitted pages spill into the WAL beyond this size.
const WRITING_WAL_BYTES = 1024 * 1024

afterEach(killLeftovers)

describe("an import killed with SIGKILL halfway (real processes)", () => {
  it("leaves the database exactly as before it started; the server and the next import use it", async () => {
    const dir = TempDirectory.make("import-kill")
    const filename = join(dir, "filedata.db")
    const env = { DATABASE_URL: `file:${filename}`, PORT: "0", HOST: "127.0.0.1" }
    const write = (name: string, document: unknown) => TempDirectory.write(dir, name, document)

    const first = await runInProcess(["import", write("baseline.json", baseline)], env)
    expect(first.code, first.stderr).toBe(0)
    const before = snapshot(filename)
    expect(before.tables.submissions?.rows).toBe(2)
    expect(before.integrity).toBe("ok")

    const importer = startBuilt("cli", ["import", write("big.json", big)], env)
    const killed = finish(importer)
    let walBytes = 0
    await Conditions.until(
      () => {
        walBytes = existsSync(`${filename}-wal`) ? statSync(`${filename}-wal`).size : 0
        return importer.exitCode !== null || walBytes >= WRITING_WAL_BYTES || undefined
      },
      { what: "the import writing", limitMillis: 60_000, intervalMillis: 5 }
    )
    expect(importer.exitCode, "the import finished before it could be killed while writing").toBeNull()
    importer.kill("SIGKILL")
    const result = await killed
    expect(result.code).toBeNull()
    expect(walBytes).toBeGreaterThanOrEqual(WRITING_WAL_BYTES)

    // Every table, row for row, and the schema: as before; the uncommitted pages left in the WAL count for nothing.
    expect(snapshot(filename)).toEqual(before)

    const server = startBuilt("server", [], env)
    const closed = finish(server)
    const base = await listening(server)
    expect((await fetch(`${base}/health`)).status).toBe(200)
    const reply = await post(base, { fileId: "contact", apiKey: "alice-key-5d0e2b" })
    expect(reply.status).toBe(200)
    expect((await reply.json()).submissions).toHaveLength(2)
    expect((await post(base, { fileId: "bulk", apiKey: "bulk-key-81c4aa" })).status).toBe(403)
    server.kill("SIGTERM")
    expect((await closed).code).toBe(0)

    const next = {
      users: [{ id: "bob", apiKeys: ["bob-key-0c9d41"] }],
      files: [{ id: "bob-file", userId: "bob", name: "Bob", creationDate: "2024-01-01T00:00:00.000Z" }]
    }
    const after = await runInProcess(["import", write("next.json", next)], env)
    expect(after.code, after.stderr).toBe(0)
    const now = snapshot(filename)
    expect(now.integrity).toBe("ok")
    expect(now.tables.users?.rows).toBe(2)
    expect(now.tables.submissions).toEqual(before.tables.submissions)
  }, 60_000)
})
