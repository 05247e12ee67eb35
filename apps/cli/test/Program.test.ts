// The CLI as main runs it, in-process: `Program.run` on a command line, an environment and stdin given as text,
// with stdout and stderr captured as a process's would be (not terminals) and the exit code main ends with. The
// output scripts read, the warnings on stderr and --log-level with LOG_LEVEL's names; what only a process shows
// is in Process.test.ts.

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { runInProcess, writeFixture } from "./utils.js"

const ESCAPE = "\u001b"

let dir = ""
const env = () => ({ DATABASE_URL: `file:${join(dir, "filedata.db")}` })

describe("the CLI as main runs it", () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "filedata-cli-program-"))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("names every problem of a fixture in one run: a refused entry's duplicate id and unknown user too", async () => {
    const fixture = writeFixture(dir, "careless.json", {
      users: [{ id: "ivan", apiKeys: ["careless-key-0001"] }],
      files: [
        { id: "form", userId: "ivan", name: "A", creationDate: "2024-01-01T00:00:00Z" },
        { id: "form", userId: "ghost", name: "B", creationDate: "2024-01-01T00:00:00Z", visitCounter: 3 }
      ]
    })
    expect(await runInProcess(["import", fixture], env())).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "the fixture was rejected and nothing was written (3 problems):\n" +
        "$.files[1].visitCounter: is not allowed\n" +
        "$.files[1].id: file id appears twice\n" +
        "$.files[1].userId: is not a user of this fixture or of the database\n"
    })
    expect((await runInProcess(["user", "list"], env())).stdout).not.toContain("ivan")
  }, 60_000)

  it("warns on stderr of a misspelled variable, naming the nearest known one, and runs the command", async () => {
    const run = await runInProcess(["user", "list"], { ...env(), DATABASE_POOL_MAXIMUM: "3" })
    expect(run.code).toBe(0)
    expect(run.stderr).toBe(
      "warning: DATABASE_POOL_MAXIMUM is not a variable of this service and is ignored: did you mean DATABASE_POOL_MAX?\n"
    )
  }, 60_000)

  it("takes the same log level names on the command line as in LOG_LEVEL", async () => {
    // Every name is checked in-process (Commands.test.ts); here the one that differs from Effect's.
    expect((await runInProcess(["--log-level", "warn", "user", "list"], env())).code).toBe(0)
    expect((await runInProcess(["user", "list"], { ...env(), LOG_LEVEL: "warn" })).code).toBe(0)
    const refused = await runInProcess(["user", "list", "--log-level=warning"], env())
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe('--log-level: expected one of debug, info, warn, error, none but received "warning"\n')
  }, 60_000)

  it("answers a mistyped command with the nearest one and its group's commands, exit code 2", async () => {
    const cases = [
      [
        ["improt", "x.json"],
        'unknown command "improt": did you mean "import"?\n' +
          "the commands of filedata: append, demo, erase, export, import, key, user, webhook (filedata --help describes them)\n"
      ],
      [
        ["key", "creat", "--user", "ivan"],
        'unknown command "key creat": did you mean "key create"?\n' +
          "the commands of filedata key: create, find, list, revoke (filedata key --help describes them)\n"
      ],
      [
        ["--log-level", "warn", "webhook", "disabel", "7"],
        'unknown command "webhook disabel": did you mean "webhook disable"?\n' +
          "the commands of filedata webhook: disable, list (filedata webhook --help describes them)\n"
      ],
      // Nothing near enough: no guess, the list alone.
      [
        ["bogus"],
        'unknown command "bogus"\n' +
          "the commands of filedata: append, demo, erase, export, import, key, user, webhook (filedata --help describes them)\n"
      ]
    ] as const
    for (const [args, stderr] of cases) {
      expect(await runInProcess(args, env()), args.join(" ")).toEqual({ code: 2, stdout: "", stderr })
    }
    // A command's own arguments and options are its own: an unknown file name is no unknown command.
    expect((await runInProcess(["import", "improt.json"], env())).stderr).not.toContain("unknown command")
  }, 60_000)

  it("names the option a value was refused for and what it takes, a flag's yes/no words too, exit code 2", async () => {
    const run = await runInProcess(["export", "--file", "form", "--format", "xlsx"], env())
    expect(run.code).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr.trim()).toBe('--format: expected one of csv, ndjson but received "xlsx"')
    expect((await runInProcess(["export", "--help"], env())).stdout).toContain("--format csv | ndjson")
    // A flag takes no value, or one of @effect/cli's yes/no words, in lower case.
    const flag = await runInProcess(["demo", "--reset=maybe"], env())
    expect(flag).toEqual({
      code: 2,
      stdout: "",
      stderr: '--reset: takes no value, or one of true, false, yes, no, on, off, 1, 0, y, n, but received "maybe"\n'
    })
    expect((await runInProcess(["demo", "--reset=no"], env())).stdout).toMatch(/^created user demo-user/)
  }, 60_000)

  it("lists the yes/no words when a yes/no variable has another value", async () => {
    for (const variable of ["TRUST_PROXY", "WEBHOOK_DELIVERY", "WEBHOOK_ALLOW_PRIVATE_NETWORKS"]) {
      const run = await runInProcess(["user", "list"], { ...env(), [variable]: "maybe" })
      expect(run.code, variable).toBe(1)
      expect(run.stderr).toBe(
        `Invalid configuration: ${variable}: Expected true, false, 1, 0, yes, no, on or off but received "maybe"\n`
      )
    }
  }, 60_000)

  it("writes no escape codes when its output is not a terminal", async () => {
    const cases = [["--help"], ["key", "--help"], ["bogus"], ["import"]]
    for (const [i, run] of (await Promise.all(cases.map((args) => runInProcess(args, env())))).entries()) {
      expect(run.stdout + run.stderr, cases[i]?.join(" ")).not.toContain(ESCAPE)
      expect(run.stdout + run.stderr).not.toBe("")
    }
    const help = await runInProcess(["--help"], env())
    expect(help.stdout).toMatch(/^filedata\n/)
    expect(help.stdout).toContain("--log-level debug | info | warn | error | none")
    expect(help.stdout).not.toMatch(/warning|fatal|trace/)
  }, 60_000)
})
