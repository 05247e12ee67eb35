// The contract's "Incremental reads" (`POST /api/v1/file-data/submissions`) as an outside client sees it: the
// server (in this process) over HTTP, fed by the CLI. Paging, windows, ties, cursors bound to their file, every refusal
// naming its field, 403 and 404 as the main operation's, one rate limit for both operations, compression, the
// header fields and the log line of every reply, and a sync loop that pages through a file, gets what the CLI
// appended since, and never what was appended with an earlier date. The sync loop runs on SQLite and on
// PostgreSQL + Redis (the latter needs TEST_DATABASE_URL and TEST_REDIS_URL; skipped, saying why, without them).

import { randomBytes } from "node:crypto"
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { createRequire } from "node:module"
import { join } from "node:path"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Conditions, Processes, TempDirectory, TestServices } from "@filedata/testing"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const { finish, root, startBuilt } = Processes

const fileDataPath = "/api/v1/file-data"
const submissionsPath = "/api/v1/file-data/submissions"

interface Submission {
  readonly createdDate: string
  readonly content: Record<string, string>
}

interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly bytes: Buffer
  readonly json: any
  /** The ids of an incremental read's submissions, which `json` then shows without them. */
  readonly ids: ReadonlyArray<string>
}

// An incremental read shows each submission with its id first: checked here, then set apart, so the
// submissions compare with what was imported.
const setIdsApart = (json: any): { json: any; ids: ReadonlyArray<string> } => {
  if (!Array.isArray(json?.submissions)) return { json, ids: [] }
  const ids: Array<string> = []
  const submissions = json.submissions.map(({ id, ...submission }: Record<string, unknown>) => {
    expect(typeof id === "string" && /^sub_[A-Za-z0-9_-]+$/.test(id), String(id)).toBe(true)
    ids.push(id as string)
    return submission
  })
  for (const submission of json.submissions) expect(Object.keys(submission)[0]).toBe("id")
  return { json: { ...json, submissions }, ids }
}

// node:http, not fetch: fetch asks for compression and undoes it itself.
const send = (
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = "POST"
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const url = new URL(path, base.replace("0.0.0.0", "127.0.0.1"))
    const text = typeof body === "string" ? body : JSON.stringify(body)
    const req = httpRequest(
      url,
      { method, headers: method === "POST" ? { "content-type": "application/json", ...headers } : headers },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("error", reject)
        res.on("end", () => {
          const bytes = Buffer.concat(chunks)
          let json: unknown
          try {
            json = JSON.parse(decoded(res.headers, bytes).toString("utf8"))
          } catch {
            json = undefined
          }
          const read = path === submissionsPath ? setIdsApart(json) : { json, ids: [] }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, ...read })
        })
      }
    )
    req.on("error", reject)
    req.end(method === "POST" ? text : undefined)
  })

const decoded = (headers: IncomingHttpHeaders, bytes: Buffer): Buffer =>
  headers["content-encoding"] === "br"
    ? brotliDecompressSync(bytes)
    : headers["content-encoding"] === "gzip"
      ? gunzipSync(bytes)
      : bytes

// What every reply of the operations carries, success or problem.
const expectOperationFields = (reply: Reply, contentType = "application/json") => {
  expect(reply.headers["content-type"]).toBe(contentType)
  expect(reply.headers["cache-control"]).toBe("no-store")
  expect(reply.headers.vary).toBe("Accept-Encoding")
  expect(reply.headers["x-content-type-options"]).toBe("nosniff")
  expect(reply.headers["x-request-id"]).toMatch(/\S/)
  expect(reply.headers["ratelimit-policy"]).toMatch(/^"api-key";q=\d+;w=60, "client-address";q=\d+;w=60$/)
  expect(reply.headers.ratelimit).toMatch(/^"client-address";r=\d+;t=\d+/)
}

const expectPage = (reply: Reply, submissions: ReadonlyArray<Submission>, hasMore: boolean) => {
  expect(reply.status, reply.bytes.toString()).toBe(200)
  expectOperationFields(reply)
  expect(Object.keys(reply.json)).toEqual(["submissions", "next", "hasMore"])
  expect(reply.json.submissions).toEqual(submissions)
  expect(reply.json.next).toMatch(/^[A-Za-z0-9_-]+$/)
  expect(reply.json.hasMore).toBe(hasMore)
}

// A 422 validation_failed naming exactly `pointers`.
const expectRefused = (reply: Reply, pointers: ReadonlyArray<string>) => {
  expect(reply.status, reply.bytes.toString()).toBe(422)
  expectOperationFields(reply, "application/problem+json")
  expect(reply.json).toMatchObject({
    type: "urn:filedata:problem:validation_failed",
    title: "Validation failed",
    status: 422,
    code: "validation_failed"
  })
  expect(reply.json.errors.map((issue: { pointer: string }) => issue.pointer).sort()).toEqual([...pointers].sort())
}

const minute = (n: number, seconds = 0) => new Date(Date.UTC(2024, 0, 1, 0, n, seconds)).toISOString()

// 25 submissions, three on each minute, so that pages of ten end inside a tie.
const journal: ReadonlyArray<Submission> = Array.from({ length: 25 }, (_, i) => ({
  createdDate: minute(Math.floor(i / 3)),
  content: { entry: String(i), note: `note ${i} `.repeat(3) }
}))
// Big enough to be streamed in many pieces, compressed or not.
const big: ReadonlyArray<Submission> = Array.from({ length: 3_000 }, (_, i) => ({
  createdDate: new Date(Date.UTC(2024, 1, 1) + i * 1_000).toISOString(),
  content: { email: `sender-${i}@example.com`, message: `message ${i} `.repeat(6) }
}))

const fileOf = (id: string, userId: string, submissions: ReadonlyArray<Submission>) => ({
  id,
  userId,
  name: id,
  creationDate: "2024-01-01T00:00:00.000Z",
  submissions
})

/** The sync loop of a client: pages of `limit` from `after` (or the start) until no more matched. */
const syncFrom = async (base: string, body: Record<string, unknown>, after?: string) => {
  const submissions: Array<Submission> = []
  const ids: Array<string> = []
  const pages: Array<number> = []
  let cursor = after
  for (;;) {
    const reply = await send(base, submissionsPath, cursor === undefined ? body : { ...body, after: cursor })
    expect(reply.status, reply.bytes.toString()).toBe(200)
    expectOperationFields(reply)
    submissions.push(...reply.json.submissions)
    ids.push(...reply.ids)
    pages.push(reply.json.submissions.length)
    cursor = reply.json.next as string
    if (!reply.json.hasMore) return { submissions, ids, pages, next: cursor }
  }
}

/**
 * The scenario every storage runs: a file of `journal` read by a sync loop in pages of ten, nothing new, then
 * three submissions appended through the CLI (one later, one on the last instant, one dated earlier) and the
 * loop continued from `next`: it gets the first two, in reply order, and never the earlier one, which a read
 * from the start and the main operation do show. The loop syncs with one key, the checks read with another.
 */
const syncScenario = async (
  base: string,
  env: Record<string, string>,
  dir: string,
  fileId: string,
  [apiKey, readerKey]: readonly [syncing: string, reading: string]
) => {
  const body = { fileId, apiKey, limit: 10 }
  const first = await syncFrom(base, body)
  expect(first.pages).toEqual([10, 10, 5])
  expect(first.submissions).toEqual(journal)
  const whole = await send(base, fileDataPath, { fileId, apiKey: readerKey })
  expect(whole.json.submissions).toEqual(first.submissions)

  // Every submission has its own id, the same on every read.
  expect(new Set(first.ids).size).toBe(journal.length)
  expect((await syncFrom(base, { ...body, apiKey: readerKey, limit: 10_000 })).ids).toEqual(first.ids)
  const idle = await syncFrom(base, body, first.next)
  expect(idle).toEqual({ submissions: [], ids: [], pages: [0], next: first.next })

  const later = { createdDate: minute(30), content: { entry: "later" } }
  const sameInstant = { createdDate: journal.at(-1)?.createdDate ?? "", content: { entry: "same instant" } }
  const earlier = { createdDate: minute(2, 30), content: { entry: "earlier" } }
  const appendFile = TempDirectory.write(dir, `append-${fileId}.json`, {
    files: [{ id: fileId, submissions: [later, sameInstant, earlier] }]
  })
  const appended = await finish(startBuilt("cli", ["append", appendFile], env))
  expect(appended.code, appended.stderr).toBe(0)
  expect(appended.stdout).toContain("appended 3 submissions to 1 file")

  const resumed = await syncFrom(base, body, first.next)
  expect(resumed.submissions).toEqual([sameInstant, later])
  expect(resumed.next).not.toBe(first.next)
  expect((await syncFrom(base, body, resumed.next)).submissions).toEqual([])

  const everything = [...journal.slice(0, 9), earlier, ...journal.slice(9), sameInstant, later]
  expect((await syncFrom(base, { fileId, apiKey: readerKey, limit: 10_000 })).submissions).toEqual(everything)
  const after = await send(base, fileDataPath, { fileId, apiKey: readerKey })
  expect(after.json).toMatchObject({ SubmissionCounter: journal.length + 3, submissions: everything })
}

describe("incremental reads on the server with SQLite", () => {
  const dir = TempDirectory.make("incremental")
  const keys = ["page", "window", "cursor", "access", "shared", "compress", "sync", "read", "log"] as const
  const fixture = {
    users: [
      { id: "alice", apiKeys: keys.map((key) => `alice-${key}`) },
      { id: "bob", apiKeys: ["bob-key"] }
    ],
    files: [
      fileOf("journal", "alice", journal),
      fileOf("synced", "alice", journal),
      fileOf("other", "alice", journal.slice(0, 3)),
      fileOf("big", "alice", big),
      fileOf("bobs", "bob", journal.slice(0, 1))
    ]
  }
  const env: Record<string, string> = {
    DATABASE_URL: `file:${join(dir, "filedata.db")}`,
    PORT: "0",
    HOST: "127.0.0.1",
    RATE_LIMIT_MAX: "8",
    RATE_LIMIT_IP_MAX: "1000000",
    RATE_LIMIT_WINDOW_MS: "60000"
  }
  let server: InProcess.Served | undefined
  let base = ""
  const stdout = () => server?.stdout() ?? ""

  beforeAll(async () => {
    await TestServer.importInto(env, fixture)
    server = await InProcess.serve({ ...env, LOG_LEVEL: "info" })
    base = server.base
  }, 60_000)

  afterAll(async () => {
    if (server !== undefined) await InProcess.stop(server)
  }, 60_000)

  it("pages through a file with limit, ties in insertion order across pages, as the main operation lists them", async () => {
    const body = { fileId: "journal", apiKey: "alice-page" }
    const whole = await send(base, fileDataPath, body)
    expect(whole.json.submissions).toEqual(journal)

    const first = await send(base, submissionsPath, { ...body, limit: 10 })
    expectPage(first, journal.slice(0, 10), true)
    // One piece: sent with its length, like the main operation's short replies.
    expect(first.headers["content-length"]).toBe(String(first.bytes.length))
    const second = await send(base, submissionsPath, { ...body, limit: 10, after: first.json.next })
    expectPage(second, journal.slice(10, 20), true)
    const third = await send(base, submissionsPath, { ...body, limit: 10, after: second.json.next })
    expectPage(third, journal.slice(20), false)
    // Past the end: nothing, and the cursor that was sent.
    const past = await send(base, submissionsPath, { ...body, limit: 10, after: third.json.next })
    expectPage(past, [], false)
    expect(past.json.next).toBe(third.json.next)
    // Without a limit, at most 1,000: here all of them.
    expectPage(await send(base, submissionsPath, body), journal, false)
  })

  it("windows: since inclusive, until exclusive, any offset, a continued page stays inside the window", async () => {
    const body = { fileId: "journal", apiKey: "alice-window" }
    expectPage(await send(base, submissionsPath, { ...body, since: minute(1) }), journal.slice(3), false)
    expectPage(await send(base, submissionsPath, { ...body, until: minute(2) }), journal.slice(0, 6), false)
    expectPage(
      await send(base, submissionsPath, { ...body, since: "2024-01-01T01:01:00+01:00", until: "2024-01-01T00:03:00Z" }),
      journal.slice(3, 9),
      false
    )
    const empty = await send(base, submissionsPath, { ...body, since: minute(4), until: minute(4) })
    expectPage(empty, [], false)

    const window = { ...body, since: minute(2), until: minute(5), limit: 4 }
    const first = await send(base, submissionsPath, window)
    expectPage(first, journal.slice(6, 10), true)
    const rest = await send(base, submissionsPath, { ...window, limit: 10, after: first.json.next })
    expectPage(rest, journal.slice(10, 15), false)

    // A window with nothing in it yet still hands out a cursor to continue from.
    const future = await send(base, submissionsPath, { ...body, since: minute(60) })
    expectPage(future, [], false)

    expectRefused(await send(base, submissionsPath, { ...body, since: minute(5), until: minute(4) }), ["/until"])
  })

  it("a cursor belongs to its file: another file's, an altered one or any other text is 422 /after", async () => {
    const other = await send(base, submissionsPath, { fileId: "other", apiKey: "alice-cursor", limit: 1 })
    expectPage(other, journal.slice(0, 1), true)
    const cursor: string = other.json.next
    const body = { fileId: "journal", apiKey: "alice-cursor" }
    const foreign = await send(base, submissionsPath, { ...body, after: cursor })
    expectRefused(foreign, ["/after"])
    expect(foreign.json.detail).toBe("/after: must be the next of an earlier reply for this file")
    const altered = `${cursor.slice(0, -2)}${cursor.at(-2) === "A" ? "B" : "A"}${cursor.at(-1)}`
    for (const after of [altered, "not a cursor", "bm90IGEgY3Vyc29y", `${cursor}=`, "", 42, null]) {
      expectRefused(await send(base, submissionsPath, { ...body, after }), ["/after"])
    }
    // Still good for its own file.
    expectPage(
      await send(base, submissionsPath, { fileId: "other", apiKey: "alice-cursor", after: cursor }),
      journal.slice(1, 3),
      false
    )
  })

  it("limit, since and until out of range, and unknown fields: 422 naming each field, nothing counted", async () => {
    const body = { fileId: "journal", apiKey: "alice-page" }
    for (const limit of [0, -1, 10_001, 1.5, "10", null, true]) {
      expectRefused(await send(base, submissionsPath, { ...body, limit }), ["/limit"])
    }
    for (const since of ["2024-01-01", "2024-01-01T00:00:00", "yesterday", "2024-02-30T00:00:00Z", 5, ""]) {
      expectRefused(await send(base, submissionsPath, { ...body, since }), ["/since"])
      expectRefused(await send(base, submissionsPath, { ...body, until: since }), ["/until"])
    }
    expectRefused(await send(base, submissionsPath, { ...body, cursor: "x", offset: 1 }), ["/cursor", "/offset"])
    expectRefused(await send(base, submissionsPath, { fileId: "journal", limit: 10_001 }), ["/apiKey", "/limit"])
    // The limits themselves are accepted, and none of the above counted against the key.
    const largest = await send(base, submissionsPath, { ...body, limit: 10_000 })
    expectPage(largest, journal, false)
    expect(largest.headers.ratelimit).toMatch(/"api-key";r=1;t=\d+$/)
  })

  it("403 and 404 as the main operation: the same status and problem document", async () => {
    for (const [status, body] of [
      [403, { fileId: "journal", apiKey: "nobody" }],
      [403, { fileId: "bobs", apiKey: "alice-access" }],
      [404, { fileId: "no-such-file", apiKey: "alice-access" }]
    ] as const) {
      const main = await send(base, fileDataPath, body)
      const sync = await send(base, submissionsPath, { ...body, limit: 5, since: minute(0) })
      expect(sync.status).toBe(status)
      expectOperationFields(sync, "application/problem+json")
      expect(sync.bytes.equals(main.bytes)).toBe(true)
    }
  })

  it("one quota for both operations: alternate requests count against one key's quota", async () => {
    const body = { fileId: "journal", apiKey: "alice-shared" }
    for (let i = 0; i < 8; i++) {
      const reply = await send(base, i % 2 === 0 ? submissionsPath : fileDataPath, body)
      expect(reply.status).toBe(200)
      expect(reply.headers.ratelimit).toMatch(new RegExp(`"api-key";r=${7 - i};t=\\d+$`))
    }
    for (const path of [submissionsPath, fileDataPath]) {
      const refused = await send(base, path, body)
      expect(refused.status).toBe(422)
      expectOperationFields(refused, "application/problem+json")
      expect(refused.json).toMatchObject({ code: "rate_limited", retryAfter: expect.any(Number) })
      expect(Number(refused.headers["retry-after"])).toBe(refused.json.retryAfter)
    }
  })

  it("one quota for both operations: alternate requests count against one client address's quota", async () => {
    const limited = await InProcess.serve({ ...env, RATE_LIMIT_IP_MAX: "4" })
    try {
      const limitedBase = limited.base
      for (let i = 0; i < 4; i++) {
        const path = i % 2 === 0 ? submissionsPath : fileDataPath
        expect((await send(limitedBase, path, { fileId: "journal", apiKey: `guess-${i}` })).status).toBe(403)
      }
      for (const path of [submissionsPath, fileDataPath]) {
        const refused = await send(limitedBase, path, { fileId: "journal", apiKey: "alice-page" })
        expect(refused.status).toBe(422)
        expect(refused.json).toMatchObject({ code: "rate_limited" })
        expect(refused.json.detail).toMatch(/^Too many requests for this client address; retry after \d+ s$/)
      }
    } finally {
      await InProcess.stop(limited)
    }
  })

  it("compression: gzip and br decode to the identity bytes; every reply varies on Accept-Encoding", async () => {
    const body = { fileId: "big", apiKey: "alice-compress", limit: 10_000 }
    const identity = await send(base, submissionsPath, body)
    expectPage(identity, big, false)
    expect(identity.headers["content-encoding"]).toBeUndefined()
    expect(identity.headers["transfer-encoding"]).toBe("chunked")
    for (const coding of ["gzip", "br"] as const) {
      const compressed = await send(base, submissionsPath, body, { "accept-encoding": coding })
      expect(compressed.status).toBe(200)
      expectOperationFields(compressed)
      expect(compressed.headers["content-encoding"]).toBe(coding)
      expect(compressed.headers["transfer-encoding"]).toBe("chunked")
      expect(compressed.bytes.length).toBeLessThan(identity.bytes.length / 4)
      expect(decoded(compressed.headers, compressed.bytes).equals(identity.bytes)).toBe(true)
    }
    // One piece over 1 KiB: compressed whole, with its length.
    const medium = await send(base, submissionsPath, { ...body, limit: 20 }, { "accept-encoding": "gzip, br" })
    expect(medium.headers["content-encoding"]).toBe("br")
    expect(medium.headers["content-length"]).toBe(String(medium.bytes.length))
    expect(medium.json.submissions).toEqual(big.slice(0, 20))
    // Under 1 KiB, and problems: never compressed, still Vary.
    const small = await send(base, submissionsPath, { ...body, limit: 1 }, { "accept-encoding": "gzip" })
    expectPage(small, big.slice(0, 1), true)
    expect(small.headers["content-encoding"]).toBeUndefined()
    const refused = await send(base, submissionsPath, { ...body, limit: 0 }, { "accept-encoding": "gzip" })
    expectRefused(refused, ["/limit"])
    expect(refused.headers["content-encoding"]).toBeUndefined()
  })

  it("405 to another method; the path is exact", async () => {
    const get = await send(base, submissionsPath, undefined, {}, "GET")
    expect(get.status).toBe(405)
    expect(get.headers.allow).toBe("POST")
    expect(get.json).toMatchObject({ code: "method_not_allowed" })
    const slash = await send(base, `${submissionsPath}/`, { fileId: "journal", apiKey: "alice-page" })
    expect(slash.status).toBe(404)
    expect(slash.json).toMatchObject({ code: "not_found" })
  })

  it("one log line per request with the path, status and request id, never the key", async () => {
    await send(
      base,
      submissionsPath,
      { fileId: "journal", apiKey: "alice-log", limit: 1 },
      { "x-request-id": "sync-ok" }
    )
    await send(
      base,
      submissionsPath,
      { fileId: "journal", apiKey: "alice-log", limit: 0 },
      { "x-request-id": "sync-bad" }
    )
    const lines = await Conditions.until(
      () => {
        const found = stdout()
          .split("\n")
          .filter((line) => line.includes('"requestId":"sync-'))
          .map((line) => JSON.parse(line))
        return found.length === 2 ? found : undefined
      },
      { what: () => `two request lines in ${stdout().slice(-2_000)}`, limitMillis: 10_000 }
    )
    expect(lines.map((line) => line.annotations)).toEqual([
      expect.objectContaining({ method: "POST", path: submissionsPath, status: 200, requestId: "sync-ok" }),
      expect.objectContaining({ method: "POST", path: submissionsPath, status: 422, requestId: "sync-bad" })
    ])
    expect(stdout()).not.toContain("alice-log")
  })

  it("the sync loop: pages through, then gets what the CLI appended since from next", async () => {
    await syncScenario(base, env, dir, "synced", ["alice-sync", "alice-read"])
  })
})

const skipReasons = [
  ...(TestServices.databaseUrl === undefined ? [TestServices.databaseUnset] : []),
  ...(TestServices.redisUrl === undefined ? [TestServices.redisUnset] : [])
]
for (const reason of skipReasons) console.warn(`Incremental reads on PostgreSQL + Redis SKIPPED: ${reason}`)

// The `pg` driver the PostgreSQL adapter uses, reached through that package: the server's test files do not
// depend on it directly. Only what this file calls is typed.
interface PgClient {
  connect(): Promise<void>
  query(text: string): Promise<unknown>
  end(): Promise<void>
}
const admin = async (statement: string) => {
  const fromPostgres = createRequire(join(root, "packages/postgres/package.json"))
  const fromSqlPg = createRequire(fromPostgres.resolve("@effect/sql-pg/package.json"))
  const pg = fromSqlPg("pg") as { Client: new (options: { connectionString: string }) => PgClient }
  const client = new pg.Client({ connectionString: TestServices.databaseUrl ?? "" })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

if (skipReasons.length > 0) {
  describe("incremental reads on the server with PostgreSQL and Redis", () => {
    it.skip(`SKIPPED: ${skipReasons.join("; ")}`, () => {})
  })
} else {
  describe("incremental reads on the server with PostgreSQL and Redis", () => {
    // A database of its own, and keys whose Redis counters no earlier run can have touched.
    const run = `${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
    const database = `filedata_incremental_${run}`
    const dir = TempDirectory.make("incremental-pg")
    const keys = { sync: `pg-sync-${run}`, read: `pg-read-${run}`, shared: `pg-shared-${run}` }
    let env: Record<string, string> = {}
    let server: InProcess.Served | undefined
    let base = ""

    beforeAll(async () => {
      await admin(`CREATE DATABASE ${database}`)
      const url = new URL(TestServices.databaseUrl ?? "")
      url.pathname = `/${database}`
      env = {
        DATABASE_URL: url.toString(),
        DATABASE_POOL_MAX: "4",
        REDIS_URL: TestServices.redisUrl ?? "",
        // An unreachable Redis must fail the test, not admit requests uncounted.
        RATE_LIMIT_FAILURE_MODE: "closed",
        RATE_LIMIT_MAX: "6",
        RATE_LIMIT_IP_MAX: "1000000",
        RATE_LIMIT_WINDOW_MS: "60000",
        PORT: "0",
        HOST: "127.0.0.1"
      }
      const fixture = {
        users: [{ id: "alice", apiKeys: Object.values(keys) }],
        files: [fileOf("synced", "alice", journal)]
      }
      await TestServer.importInto(env, fixture)
      server = await InProcess.serve(env)
      base = server.base
    }, 120_000)

    afterAll(async () => {
      try {
        if (server !== undefined) await InProcess.stop(server)
      } finally {
        // WITH (FORCE) ends connections a failed test may have left open (PostgreSQL 13 and later).
        await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      }
    }, 120_000)

    it("the sync loop: pages through, then gets what the CLI appended since from next", async () => {
      await syncScenario(base, env, dir, "synced", [keys.sync, keys.read])
    })

    it("one quota in Redis for both operations: alternate requests count against one key", async () => {
      const body = { fileId: "synced", apiKey: keys.shared }
      for (let i = 0; i < 6; i++) {
        const reply = await send(base, i % 2 === 0 ? submissionsPath : fileDataPath, body)
        expect(reply.status).toBe(200)
        expect(reply.headers.ratelimit).toMatch(new RegExp(`"api-key";r=${5 - i};t=\\d+$`))
      }
      const refused = await send(base, submissionsPath, body)
      expect(refused.status).toBe(422)
      expect(refused.json).toMatchObject({ code: "rate_limited" })
    })
  })
}
