// The first mistakes of a new operator, as the built server shows them: a misspelled variable is named with the
// one it resembles, the settings in effect are one line (no password), a wrong flag lists the spellings taken.

import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Processes } from "@filedata/testing"

const { finish, killLeftovers, serve, startBuilt, stop } = Processes

const database = () => `file:${join(mkdtempSync(join(tmpdir(), "filedata-environment-")), "filedata.db")}`

const lines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { message: string; logLevel: string; annotations: Record<string, unknown> })

afterEach(killLeftovers)

describe("the server's start", () => {
  it("warns of a misspelled variable, naming the nearest known one, and logs the settings in effect", async () => {
    const served = await serve({
      LOG_LEVEL: "info",
      PORT: "0",
      HOST: "127.0.0.1",
      DATABASE_URL: database(),
      REDIS_URL: "",
      RATE_LIMT_MAX: "5",
      HTTP_DRAIN_TIMEOUT: "100",
      RATE_LIMIT_IP_MAX: "7"
    })
    const exit = await stop(served)
    const logged = lines(exit.stdout)
    const warnings = logged.filter((line) => line.logLevel === "WARN").map((line) => line.message)
    expect(warnings).toEqual([
      "HTTP_DRAIN_TIMEOUT is not a variable of this service and is ignored: did you mean HTTP_DRAIN_TIMEOUT_MS?",
      "RATE_LIMT_MAX is not a variable of this service and is ignored: did you mean RATE_LIMIT_MAX?"
    ])
    const settings = logged.filter((line) => line.message === "settings")
    expect(settings).toHaveLength(1)
    // In the order they happened: the warnings and the settings come before the line that says it serves.
    const listening = logged.findIndex((line) => String(line.message).startsWith("listening on"))
    expect(listening).toBeGreaterThan(logged.indexOf(settings[0] as (typeof logged)[number]))
    expect(settings[0]?.annotations).toMatchObject({
      "rateLimiting.policy.apiKey.limit": 60,
      "rateLimiting.policy.clientAddress.limit": 7,
      "http.drainTimeoutMillis": 10_000,
      "rateLimiting.redisUrl": "unset"
    })
  })

  it("shows the database and Redis URLs without their passwords", async () => {
    const child = startBuilt("server", [], {
      LOG_LEVEL: "info",
      PORT: "0",
      DATABASE_URL: "postgres://filedata:s3cret@127.0.0.1:1/filedata",
      REDIS_URL: "redis://:hunter2@127.0.0.1:1"
    })
    const exit = await finish(child)
    expect(exit.code).toBe(1)
    const settings = lines(exit.stdout).find((line) => line.message === "settings")
    expect(settings?.annotations).toMatchObject({
      "storage.database.url": "postgres://***@127.0.0.1:1/filedata",
      "rateLimiting.redisUrl": "redis://***@127.0.0.1:1"
    })
    expect(exit.stdout + exit.stderr).not.toMatch(/s3cret|hunter2/)
  })

  it("refuses a flag it cannot read with the spellings it takes", async () => {
    const exit = await finish(startBuilt("server", [], { PORT: "0", DATABASE_URL: database(), TRUST_PROXY: "maybe" }))
    expect(exit.code).toBe(1)
    expect(exit.stderr.trim()).toBe(
      'Invalid configuration: TRUST_PROXY: Expected true, false, 1, 0, yes, no, on or off but received "maybe"'
    )
  })
})
