// What only a process shows of the CLI: the built `apps/cli/dist/bundle/main.js` as a real process, its exit codes
// as a shell sees them (0 success, 1 a failed command, 2 a wrong command line, 130 after Ctrl-C), its stdin
// piped, and its colours where a terminal reads it and nowhere else. The rest of what it prints is checked on
// the same program in-process (Program.test.ts).

import { spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Conditions, Fixtures, Processes } from "@filedata/testing"
import { runBuilt, runInProcess, runOnTerminal } from "./utils.js"

const ESCAPE = "\u001b"

let dir = ""
const env = () => ({ DATABASE_URL: `file:${join(dir, "filedata.db")}` })

describe("the CLI as a real process", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "filedata-cli-process-"))
  }, 180_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("exits 0 on success, 1 when a command fails, 2 when the command line is wrong", async () => {
    const created = await runInProcess(["user", "create", "dora"], env())
    expect(created).toEqual({ code: 0, stdout: expect.stringMatching(/^created user dora/), stderr: "" })
    expect(await runBuilt(["user", "list"], env())).toEqual({
      code: 0,
      stdout: "ID    KEYS  FILES\ndora  0     0\n",
      stderr: ""
    })

    // Each kind of end reaches the process's exit code, one process each; every command line and failure behind
    // each is checked in-process (Commands.test.ts, "exits 2 for unknown commands…"), on the function main takes
    // the code from.
    const failed = await runBuilt(["user", "create", "dora"], env())
    expect(failed.code).toBe(1)
    expect(failed.stderr).not.toBe("")
    // Invalid configuration is a failed start, as for the server.
    expect((await runInProcess(["user", "list"], { ...env(), LOG_LEVEL: "warning" })).code).toBe(1)
    const wrong = await runBuilt(["export", "--file", "x", "--format", "csv", "--since", "2024-03-07"], env())
    expect(wrong.code).toBe(2)
    expect(wrong.stderr.split("\n")[0]).toBe(
      "--since: must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
    )
  }, 60_000)

  it("says an import stopped by Ctrl-C (SIGINT) wrote nothing, and exits 130", async () => {
    const fixture = join(dir, "bulk.json")
    writeFileSync(
      fixture,
      JSON.stringify({
        users: [{ id: "bulk", apiKeys: ["bulk-key-interrupted"] }],
        files: [Fixtures.bulkFile(100_000, 2)]
      })
    )
    const child = Processes.startBuilt("cli", ["import", fixture], env())
    const exited = Processes.finish(child)
    // Halfway: the CLI has the file open, which it has only while it reads it (Linux's /proc shows it).
    const reading = () => {
      try {
        return readdirSync(`/proc/${child.pid}/fd`).some((fd) => {
          try {
            return readlinkSync(`/proc/${child.pid}/fd/${fd}`) === fixture
          } catch {
            return false
          }
        })
      } catch {
        return false
      }
    }
    await Conditions.until(() => (reading() ? true : undefined), { what: "the import reading", limitMillis: 30_000 })
    child.kill("SIGINT")
    const exit = await exited
    expect(exit).toEqual({ code: 130, stdout: "", stderr: "interrupted: nothing was written\n" })
    expect((await runInProcess(["user", "list"], env())).stdout).not.toContain("bulk")
  }, 60_000)

  it("`pnpm filedata`, as documented, prints only the CLI's lines and keeps its exit code", async () => {
    // From a directory below the root, as a reader may: pnpm finds the command, which runs from the root.
    const run = spawnSync("pnpm", ["filedata", "bogus"], {
      cwd: join(Processes.root, "docs"),
      env: { ...process.env, ...env(), LOG_LEVEL: "warn" },
      encoding: "utf8"
    })
    expect({ code: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'unknown command "bogus"\n' +
        "the commands of filedata: append, demo, erase, export, import, key, user, webhook (filedata --help describes them)\n"
    })
  }, 60_000)

  it("colours help on a terminal, and not at all with NO_COLOR set", async (context) => {
    // Piped, the process's stdout is no terminal; the other commands' output is checked in-process.
    const piped = await runBuilt(["--help"], env())
    expect(piped.code).toBe(0)
    expect(piped.stdout).not.toContain(ESCAPE)
    // NO_COLOR is read from the environment, not from the process: checked on the program, both streams terminals.
    const terminals = { stdout: true, stderr: true }
    for (const args of [["--help"], ["bogus"]]) {
      const plain = await runInProcess(args, { ...env(), NO_COLOR: "1" }, "", terminals)
      expect(plain.stdout + plain.stderr, args.join(" ")).not.toContain(ESCAPE)
      expect(plain.stdout + plain.stderr).not.toBe("")
    }
    // An empty NO_COLOR does not count (no-color.org).
    expect((await runInProcess(["--help"], { ...env(), NO_COLOR: "" }, "", terminals)).stdout).toContain(ESCAPE)
    // Whether a stream is a terminal is the process's to tell.
    const coloured = await runOnTerminal(["--help"], env())
    if (coloured === undefined) return context.skip()
    expect(coloured.code).toBe(0)
    expect(coloured.output).toContain(ESCAPE)
  }, 60_000)

  it("imports a fixture piped to it by a shell, as /dev/stdin", async () => {
    const fixture = join(dir, "piped.json")
    writeFileSync(fixture, JSON.stringify({ users: [{ id: "piper", apiKeys: ["piper-key-0001"] }], files: [] }))
    // A shell's pipe, as `curl … | pnpm filedata import /dev/stdin` makes it (Node's own stdin pipes are sockets).
    const command = `cat "$FIXTURE" | "$NODE" "$CLI" import /dev/stdin`
    const run = spawnSync("sh", ["-c", command], {
      env: { ...process.env, ...env(), FIXTURE: fixture, NODE: process.execPath, CLI: Processes.builtEntry("cli") },
      encoding: "utf8"
    })
    expect({ code: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
      code: 0,
      stdout: "imported 1 user, 1 API key, 0 files, 0 submissions\n",
      stderr: ""
    })
  }, 60_000)

  it("key find reads a key from stdin and prints its id", async () => {
    await runInProcess(["user", "create", "erin"], env())
    const created = await runInProcess(["key", "create", "--user", "erin"], env())
    const key = /^API key: (\S+)$/m.exec(created.stdout)?.[1] ?? ""
    const id = /^created API key (\S+) /.exec(created.stdout)?.[1] ?? ""
    const found = await runBuilt(["key", "find"], env(), `${key}\n`)
    expect(found.code).toBe(0)
    expect(found.stderr).toBe("")
    expect(found.stdout.split("\n")[1]?.split(/\s+/).slice(0, 3)).toEqual([id, key.slice(0, 8), "erin"])
    expect(found.stdout).not.toContain(key)
    expect((await runBuilt(["key", "find"], env(), "fdk_unknown\n")).code).toBe(1)
    expect((await runBuilt(["key", "find"], env(), "")).code).toBe(2)
  }, 60_000)
})
