// The contract's `wait` on `POST /api/v1/file-data/submissions` (long poll), as an outside client sees it: the
// server in this process (the built one where SIGTERM is the subject), submissions appended by the CLI in
// another process. A waiting request is answered
// with what the CLI appended, before its wait is up; one whose wait is up gets the empty page with `next`
// unchanged; the bounds per key and per address answer 422 `rate_limited` with Retry-After; SIGTERM answers
// every waiting request at once and the server exits 0. On SQLite (the file shared with the CLI), and on
// PostgreSQL with two instances (needs TEST_DATABASE_URL; skipped, saying why, without it).

import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Conditions, Processes, TempDirectory, TestServices } from "@filedata/testing"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const { finish, serve, startBuilt } = Processes

const submissionsPath = "/api/v1/file-data/submissions"

interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly json: any
}

const ask = async (base: string, body: unknown): Promise<Reply> => {
  const response = await fetch(`${base.replace("0.0.0.0", "127.0.0.1")}${submissionsPath}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, headers: response.headers, json: await response.json() }
}

// A request in flight, and whether it has been answered yet.
const inFlight = (reply: Promise<Reply>) => {
  let settled = false
  const done = reply.finally(() => {
    settled = true
  })
  return { done, settled: () => settled }
}

const KEY = "long-poll-key"
const OTHER_KEY = "long-poll-other-key"

const fixture = {
  users: [{ id: "alice", apiKeys: [KEY, OTHER_KEY] }],
  files: ["watched", "quiet"].map((id) => ({
    id,
    userId: "alice",
    name: `File ${id}`,
    creationDate: "2024-01-01T00:00:00.000Z",
    submissions: [{ createdDate: "2024-01-02T00:00:00.000Z", content: { n: `${id}-0` } }]
  }))
}

const appendDocument = (fileId: string, n: string) => ({
  files: [{ id: fileId, submissions: [{ createdDate: "2024-03-01T00:00:00.000Z", content: { n } }] }]
})

// The CLI, another process, appends to `fileId` through the configured database.
const appendWithCli = async (env: Record<string, string>, dir: string, fileId: string, n: string) => {
  const document = TempDirectory.write(dir, `append-${n}.json`, appendDocument(fileId, n))
  const appended = await finish(startBuilt("cli", ["append", document], env))
  expect(appended.code, appended.stderr).toBe(0)
}

// The cursor at the end of a file as it is now.
const endOf = async (base: string, fileId: string): Promise<string> => {
  const reply = await ask(base, { fileId, apiKey: KEY, limit: 10_000 })
  expect(reply.status).toBe(200)
  return reply.json.next
}

// Waits for the append while the request waits: the request must still be pending when the append is made,
// and answered with it before its wait of 30 s is up.
const answeredByAppend = async (bases: ReadonlyArray<string>, env: Record<string, string>, dir: string, n: string) => {
  const afters = await Promise.all(bases.map((base) => endOf(base, "watched")))
  const started = performance.now()
  const waiting = bases.map((base, i) =>
    inFlight(ask(base, { fileId: "watched", apiKey: KEY, after: afters[i], wait: 30 }))
  )
  await appendWithCli(env, dir, "watched", n)
  for (const { done } of waiting) {
    const reply = await done
    expect(reply.status).toBe(200)
    expect(reply.json.submissions.map((s: { content: { n: string } }) => s.content.n)).toEqual([n])
  }
  expect(performance.now() - started).toBeLessThan(25_000)
}

afterEach(() => Processes.killLeftovers())

describe("long poll on the server with SQLite", () => {
  const dir = TempDirectory.make("long-poll")
  let env: Record<string, string> = {}

  beforeAll(async () => {
    const imported = await TestServer.importedDatabase("long-poll", fixture)
    env = { ...imported.env, LONG_POLL_MAX_PER_KEY: "2", LONG_POLL_MAX_PER_ADDRESS: "3" }
  }, 60_000)

  it("answers a waiting request with what the CLI appended in another process, before its wait is up", async () => {
    const served = await InProcess.serve(env)
    try {
      const after = await endOf(served.base, "watched")
      const waiting = inFlight(ask(served.base, { fileId: "watched", apiKey: KEY, after, wait: 30 }))
      // An append to another file wakes nothing: the request is still waiting after it.
      await appendWithCli(env, dir, "quiet", "q1")
      const quiet = await ask(served.base, { fileId: "quiet", apiKey: KEY, after: await endOf(served.base, "quiet") })
      expect(quiet.json.submissions).toEqual([])
      expect(waiting.settled()).toBe(false)
      await answeredByAppend([served.base], env, dir, "w1")
      expect(waiting.settled()).toBe(true)
      const reply = await waiting.done
      expect(reply.json.submissions.map((s: { content: { n: string } }) => s.content.n)).toEqual(["w1"])
      expect(reply.json.hasMore).toBe(false)
      expect(reply.json.next).not.toBe(after)
    } finally {
      await InProcess.stop(served)
    }
  }, 90_000)

  it("gives the empty page with next unchanged when the wait is up, and refuses a wait out of range", async () => {
    const served = await InProcess.serve(env)
    try {
      const after = await endOf(served.base, "quiet")
      const reply = await ask(served.base, { fileId: "quiet", apiKey: KEY, after, wait: 1 })
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({ submissions: [], next: after, hasMore: false })
      const refused = await ask(served.base, { fileId: "quiet", apiKey: KEY, wait: 31 })
      expect(refused.status).toBe(422)
      expect(refused.json.code).toBe("validation_failed")
      expect(refused.json.errors).toEqual([{ pointer: "/wait", detail: "must be an integer from 0 to 30" }])
    } finally {
      await InProcess.stop(served)
    }
  }, 60_000)

  it("bounds the waiting requests of a key and of an address: 422 rate_limited with Retry-After", async () => {
    const served = await serve(env)
    try {
      const after = await endOf(served.base, "quiet")
      const body = (apiKey: string, wait = 30) => ({ fileId: "quiet", apiKey, after, wait })
      // Probes wait a second at most, should one come before the requests it is to be refused by.
      const refused = (apiKey: string) =>
        Conditions.until(
          async () => {
            const reply = await ask(served.base, body(apiKey, 1))
            return reply.status === 422 ? reply : undefined
          },
          { what: "a request over the bound refused", limitMillis: 20_000 }
        )
      const held = [inFlight(ask(served.base, body(KEY))), inFlight(ask(served.base, body(KEY)))]
      const overKey = await refused(KEY)
      expect(overKey.json.code).toBe("rate_limited")
      expect(overKey.headers.get("retry-after")).toBe("1")
      held.push(inFlight(ask(served.base, body(OTHER_KEY))))
      const overAddress = await refused(OTHER_KEY)
      expect(overAddress.json.code).toBe("rate_limited")
      expect(overAddress.json.detail).toMatch(/client address/)
      expect(held.some((request) => request.settled())).toBe(false)
      // SIGTERM answers every waiting request at once with the empty page, then the server exits 0.
      const stopping = performance.now()
      const exit = Processes.stop(served)
      for (const request of held) {
        const reply = await request.done
        expect(reply.status).toBe(200)
        expect(reply.json).toEqual({ submissions: [], next: after, hasMore: false })
      }
      await exit
      expect(performance.now() - stopping).toBeLessThan(20_000)
    } finally {
      served.child.kill("SIGKILL")
    }
  }, 90_000)
})

const testDatabaseUrl = TestServices.databaseUrl
if (testDatabaseUrl === undefined) console.warn(`Long poll on PostgreSQL SKIPPED: ${TestServices.databaseUnset}`)

if (testDatabaseUrl === undefined) {
  describe("long poll on two instances on one PostgreSQL", () => {
    it.skip(`SKIPPED: ${TestServices.databaseUnset}`, () => {})
  })
} else {
  describe("long poll on two instances on one PostgreSQL", () => {
    const dir = TempDirectory.make("long-poll-pg")
    let database: Awaited<ReturnType<typeof TestServices.temporaryDatabase>> | undefined
    let env: Record<string, string> = {}

    beforeAll(async () => {
      database = await TestServices.temporaryDatabase("filedata_long_poll")
      env = { DATABASE_URL: database.url, DATABASE_POOL_MAX: "4", PORT: "0", HOST: "127.0.0.1" }
      await TestServer.importInto(env, fixture)
    }, 60_000)

    afterAll(async () => {
      await database?.drop()
    }, 60_000)

    it("answers requests waiting on both instances with what the CLI appended", async () => {
      const [a, b] = await Promise.all([InProcess.serve(env), InProcess.serve(env)])
      try {
        await answeredByAppend([a.base, b.base], env, dir, "pg1")
        // Notifications only bring the poll forward: with none (a listener's connection lost), the poll answers.
        await TestServices.runStatement(
          env.DATABASE_URL ?? "",
          "ALTER TABLE submissions DISABLE TRIGGER submissions_notify"
        )
        await answeredByAppend([a.base, b.base], env, dir, "pg2")
      } finally {
        await Promise.all([InProcess.stop(a), InProcess.stop(b)])
      }
    }, 120_000)
  })
}
