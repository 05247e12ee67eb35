// A start that cannot succeed, as an operator sees it: the built server and CLI as real processes, refused with
// a non-zero exit and one line on stderr naming the variable, the address and the driver's reason.

import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Processes, TestServices } from "@filedata/testing"

const { finish, killLeftovers, startBuilt } = Processes

const testDatabaseUrl = TestServices.databaseUrl
const hasTestDatabase = testDatabaseUrl !== undefined
if (!hasTestDatabase) {
  console.warn("StartUp: the missing PostgreSQL database case SKIPPED: TEST_DATABASE_URL is unset")
}

/** A usable SQLite file and no Redis, so each case changes only what it is about. */
const baseEnv = () => ({
  PORT: "0",
  HOST: "127.0.0.1",
  DATABASE_URL: `file:${join(mkdtempSync(join(tmpdir(), "filedata-startup-")), "filedata.db")}`,
  REDIS_URL: ""
})

/** Runs the app to its end; it must exit non-zero without serving and print exactly one line on stderr. */
const refused = async (app: "server" | "cli", env: Record<string, string>, args: ReadonlyArray<string> = []) => {
  const child = startBuilt(app, args, { ...baseEnv(), ...env })
  // A start that wrongly succeeds fails the test at once instead of serving until the test times out.
  child.stdout?.on("data", (chunk) => {
    if (String(chunk).includes("listening on")) child.kill("SIGKILL")
  })
  const exit = await finish(child)
  expect(exit.stdout).not.toContain("listening on")
  expect(exit.code, exit.stderr).not.toBe(0)
  expect(exit.code, "killed instead of exiting").not.toBeNull()
  const lines = exit.stderr.split("\n").filter((line) => line !== "")
  expect(lines, exit.stderr).toHaveLength(1)
  return lines[0] ?? ""
}

// Nothing listens on port 1: connections are refused at once.
const refusedPostgres = "postgres://filedata:s3cret@127.0.0.1:1/filedata"
const refusedPostgresLine =
  "Cannot start: the database at DATABASE_URL=postgres://***@127.0.0.1:1/filedata is not available: " +
  "PgClient: Failed to connect: connect ECONNREFUSED 127.0.0.1:1"

afterEach(killLeftovers)

describe("the server refuses to start", () => {
  it("with a REDIS_URL that is not a Redis URL", async () => {
    expect(await refused("server", { REDIS_URL: "http://x" })).toBe(
      'Invalid configuration: REDIS_URL: Expected a redis:// or rediss:// URL but received "http://x"'
    )
  })

  it("with a Redis that refuses connections", async () => {
    expect(await refused("server", { REDIS_URL: "redis://127.0.0.1:1" })).toBe(
      "Cannot start: Redis at REDIS_URL=redis://127.0.0.1:1 is not available: connect ECONNREFUSED 127.0.0.1:1"
    )
  })

  it.runIf(hasTestDatabase)("with a PostgreSQL database that does not exist", async () => {
    const url = new URL(testDatabaseUrl ?? "")
    url.pathname = "/filedata_missing_db"
    const line = await refused("server", { DATABASE_URL: url.href })
    const shown = url.username === "" && url.password === "" ? url.href : url.href.replace(/\/\/.*@/, "//***@")
    expect(line).toBe(
      `Cannot start: the database at DATABASE_URL=${shown} is not available: ` +
        'PgClient: Failed to connect: database "filedata_missing_db" does not exist'
    )
  })

  it("with a PostgreSQL port that refuses connections, never printing the password", async () => {
    const line = await refused("server", { DATABASE_URL: refusedPostgres })
    expect(line).toBe(refusedPostgresLine)
    expect(line).not.toContain("s3cret")
  })

  it("with a SQLite path whose directory cannot be created", async () => {
    const dir = mkdtempSync(join(tmpdir(), "filedata-startup-"))
    writeFileSync(join(dir, "regular"), "")
    const filename = join(dir, "regular", "under", "it.db")
    expect(await refused("server", { DATABASE_URL: `file:${filename}` })).toBe(
      `Cannot start: the database at DATABASE_URL=file:${filename} is not available: cannot create the directory ` +
        `${join(dir, "regular", "under")}: ENOTDIR: not a directory, mkdir '${join(dir, "regular", "under")}'`
    )
  })
})

describe("the CLI, with the same configuration", () => {
  it("prints the server's line when a command needs the database, and needs none for --help", async () => {
    expect(await refused("cli", { DATABASE_URL: refusedPostgres }, ["key", "list"])).toBe(refusedPostgresLine)
    const help = await finish(startBuilt("cli", ["--help"], { ...baseEnv(), DATABASE_URL: refusedPostgres }))
    expect(help.code, help.stderr).toBe(0)
  })

  it("refuses invalid configuration as the server does", async () => {
    expect(await refused("cli", { REDIS_URL: "http://x" }, ["key", "list"])).toBe(
      'Invalid configuration: REDIS_URL: Expected a redis:// or rediss:// URL but received "http://x"'
    )
  })
})
