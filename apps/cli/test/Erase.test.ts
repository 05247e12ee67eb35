// `filedata erase` as main runs it, in-process, on a real SQLite file; one run through the built CLI as a process.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqliteFiles } from "@filedata/testing"
import { runBuilt, runInProcess, writeFixture } from "./utils.js"

let dir = ""
const database = () => join(dir, "filedata.db")
const env = () => ({ DATABASE_URL: `file:${database()}` })

// What the database holds, read by a connection of its own.
const rows = (file: string) => {
  const db = SqliteFiles.connect(database(), { readonly: true })
  try {
    return db
      .prepare("SELECT id, content FROM submissions WHERE file_id = ? ORDER BY created_date, seq")
      .all(file) as Array<{ id: string; content: string }>
  } finally {
    db.close()
  }
}
const counter = (file: string) => {
  const db = SqliteFiles.connect(database(), { readonly: true })
  try {
    return (db.prepare("SELECT submission_counter AS n FROM files WHERE id = ?").get(file) as { n: number }).n
  } finally {
    db.close()
  }
}
const emails = (file: string) => rows(file).map((row) => JSON.parse(row.content).email as string)

describe("erase", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "filedata-cli-erase-"))
    const at = (i: number) => `2024-01-0${i + 1}T00:00:00Z`
    const fixture = writeFixture(dir, "people.json", {
      users: [{ id: "ivan", apiKeys: ["erase-test-key-0001"] }],
      files: ["signups", "other"].map((id) => ({
        id,
        userId: "ivan",
        name: id,
        creationDate: "2024-01-01T00:00:00Z",
        submissions: ["ann@example.com", "bob@example.com", "ann@example.com", "cy@example.com"].map((email, i) => ({
          createdDate: at(i),
          content: { email, list: i === 2 ? "offers" : "news", note: "a=b" }
        }))
      }))
    })
    expect((await runInProcess(["import", fixture], env())).code).toBe(0)
  }, 60_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("erases by content, every --where must hold, and prints how many and their ids", async () => {
    const [, , ann2] = rows("signups")
    const run = await runInProcess(
      ["erase", "--file", "signups", "--where", "email=ann@example.com", "--where", "list=offers"],
      env()
    )
    expect(run).toEqual({ code: 0, stdout: `erased 1 submission of file signups\n${ann2?.id}\n`, stderr: "" })
    expect(emails("signups")).toEqual(["ann@example.com", "bob@example.com", "cy@example.com"])
    expect(counter("signups")).toBe(3)
    // A value may hold `=`: the name ends at the first one.
    const none = await runInProcess(["erase", "--file", "signups", "--where", "note=a=c"], env())
    expect(none).toEqual({ code: 0, stdout: "erased 0 submissions of file signups (none matched)\n", stderr: "" })
  }, 60_000)

  it("erases by ids, and refuses another file's id, naming it, with nothing written", async () => {
    const [ann, bob] = rows("signups")
    const [theirs] = rows("other")
    const refused = await runInProcess(
      ["erase", "--file", "signups", "--id", ann?.id ?? "", "--id", theirs?.id ?? ""],
      env()
    )
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(
      `${theirs?.id} is a submission of another file, not of file "signups": nothing was erased\n`
    )
    expect(rows("signups").length).toBe(3)
    const run = await runInProcess(["erase", "--file", "signups", "--id", ann?.id ?? "", "--id", bob?.id ?? ""], env())
    expect(run).toEqual({
      code: 0,
      stdout: `erased 2 submissions of file signups\n${ann?.id}\n${bob?.id}\n`,
      stderr: ""
    })
    expect(emails("signups")).toEqual(["cy@example.com"])
    expect(emails("other").length).toBe(4)
  }, 60_000)

  it("refuses an unknown file with exit 1, and a wrong command line with exit 2, writing nothing", async () => {
    const before = rows("other")
    expect(await runInProcess(["erase", "--file", "nope", "--where", "email=ann@example.com"], env())).toEqual({
      code: 1,
      stdout: "",
      stderr: 'No file has the id "nope": nothing was erased\n'
    })
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [
        ["--where", "email"],
        '--where: expected NAME=VALUE, such as --where email=ann@example.com, but received "email"'
      ],
      [
        ["--where", "email=ann@example.com", "--id", before[0]?.id ?? ""],
        "erase takes --id or --where, not both: erase by ids, or by content"
      ],
      [[], "erase needs the submissions to erase: --id SUBMISSION_ID (repeatable) or --where NAME=VALUE (repeatable)"]
    ]
    for (const [args, line] of cases) {
      const run = await runInProcess(["erase", "--file", "other", ...args], env())
      expect(run.code, args.join(" ")).toBe(2)
      expect(run.stderr.split("\n")[0], args.join(" ")).toBe(line)
    }
    const badId = await runInProcess(["erase", "--file", "other", "--id", "not-an-id"], env())
    expect(badId.code).toBe(2)
    expect(badId.stderr).toContain("--id")
    expect(rows("other")).toEqual(before)
  }, 60_000)

  it("runs as a process: erases, prints the ids and exits 0; an unknown file exits 1", async () => {
    const [cy] = rows("other").filter((row) => row.content.includes("cy@"))
    expect(await runBuilt(["erase", "--file", "other", "--where", "email=cy@example.com"], env())).toEqual({
      code: 0,
      stdout: `erased 1 submission of file other\n${cy?.id}\n`,
      stderr: ""
    })
    const unknown = await runBuilt(["erase", "--file", "nope", "--id", cy?.id ?? ""], env())
    expect(unknown.code).toBe(1)
    expect(emails("other")).toEqual(["ann@example.com", "bob@example.com", "ann@example.com"])
  }, 120_000)
})
