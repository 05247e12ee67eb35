// The contract's change feed (`POST /api/v1/file-data/changes`) as an outside client sees it: the server in
// this process over HTTP, on a SQLite file that another connection appends to through the operator store, as
// the CLI would. The same checks, refusals and quota as the other operations on a file, every `after` that is
// not a feed cursor of the file refused on /after (an incremental read's included), paging with limit, every
// change once in commit order (a backdated append after the changes before it), and a waiting request answered
// by an append or an erasure, or by SIGTERM (the built server) with the empty page. On PostgreSQL (needs TEST_DATABASE_URL;
// skipped, saying why, without it): two instances agree on the feed, and both wake on another's append.

import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { FileData, OperatorStore } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import { Storage } from "@filedata/runtime"
import { Processes, TestServices } from "@filedata/testing"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const changesPath = "/api/v1/file-data/changes"
const submissionsPath = "/api/v1/file-data/submissions"

interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly json: any
}

const post = async (base: string, path: string, body: unknown): Promise<Reply> => {
  const response = await fetch(`${base.replace("0.0.0.0", "127.0.0.1")}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })
  return { status: response.status, headers: response.headers, json: await response.json() }
}

const minute = (n: number) => new Date(Date.UTC(2024, 0, 1, 0, n)).toISOString()

const journal = Array.from({ length: 7 }, (_, i) => ({ createdDate: minute(i), content: { n: `j${i}` } }))

const fixture = {
  users: [
    { id: "alice", apiKeys: ["alice-key", "alice-wait-key", "alice-limited-key"] },
    { id: "bob", apiKeys: ["bob-key"] }
  ],
  files: [
    { id: "journal", userId: "alice", name: "Journal", creationDate: "2024-01-01T00:00:00.000Z", submissions: journal },
    { id: "watched", userId: "alice", name: "Watched", creationDate: "2024-01-01T00:00:00.000Z", submissions: [] },
    { id: "other", userId: "bob", name: "Other", creationDate: "2024-01-01T00:00:00.000Z", submissions: journal }
  ]
}

// What a change names: `created <n>` or `erased <id>`.
const told = (changes: ReadonlyArray<any>) =>
  changes.map((change) =>
    change.type === "submission.created" ? `created ${change.content.n}` : `erased ${change.id}`
  )

/** The feed read from `after` (or the start) in pages of `limit` until no more: every change, the cursor. */
const follow = async (base: string, body: Record<string, unknown>, after?: string) => {
  const changes: Array<any> = []
  const pages: Array<number> = []
  let cursor = after
  for (;;) {
    const reply = await post(base, changesPath, cursor === undefined ? body : { ...body, after: cursor })
    expect(reply.status, JSON.stringify(reply.json)).toBe(200)
    expect(Object.keys(reply.json)).toEqual(["changes", "next", "hasMore"])
    changes.push(...reply.json.changes)
    pages.push(reply.json.changes.length)
    cursor = reply.json.next as string
    if (!reply.json.hasMore) return { changes, pages, next: cursor }
  }
}

interface Appended {
  readonly createdDate: string
  readonly content: object
}

// Erases through the operator store on a connection of its own, as `pnpm filedata erase` would.
const eraseThroughStore = (env: Record<string, string>, fileId: string, where: { name: string; value: string }) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      return yield* store.eraseSubmissions(FileData.FileId.make(fileId), { _tag: "Where", matches: [where] })
    }).pipe(
      Effect.provide(Storage.layerConfig.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson(env))))),
      Effect.scoped,
      Effect.orDie
    )
  )

// Appends through the operator store on a connection of its own, as another process would.
const appendThroughStore = (env: Record<string, string>, fileId: string, submissions: ReadonlyArray<Appended>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      yield* store.appendSubmissions(yield* AppendDocument.decode({ files: [{ id: fileId, submissions }] }))
    }).pipe(
      Effect.provide(Storage.layerConfig.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson(env))))),
      Effect.scoped,
      Effect.orDie
    )
  )

afterEach(() => Processes.killLeftovers())

describe("the change feed on the server with SQLite", () => {
  let env: Record<string, string> = {}
  let served: InProcess.Served | undefined
  let base = ""

  const append = (fileId: string, submissions: ReadonlyArray<Appended>) => appendThroughStore(env, fileId, submissions)

  beforeAll(async () => {
    const imported = await TestServer.importedDatabase("changes", fixture)
    env = { ...imported.env, RATE_LIMIT_MAX: "1000" }
    served = await InProcess.serve(env)
    base = served.base
  }, 60_000)

  afterAll(async () => {
    if (served !== undefined) await InProcess.stop(served)
  }, 60_000)

  it("gives the owner every change from the first, in pages of limit, with the incremental read's ids", async () => {
    const body = { fileId: "journal", apiKey: "alice-key", limit: 3 }
    const read = await follow(base, body)
    expect(read.pages).toEqual([3, 3, 1])
    expect(told(read.changes)).toEqual(journal.map(({ content }) => `created ${content.n}`))
    for (const change of read.changes) {
      expect(Object.keys(change)).toEqual(["type", "id", "createdDate", "content"])
      expect(change.id).toMatch(/^sub_[A-Za-z0-9_-]+$/)
    }
    const submissions = await post(base, submissionsPath, { fileId: "journal", apiKey: "alice-key" })
    expect(read.changes.map((change) => change.id)).toEqual(
      submissions.json.submissions.map((submission: { id: string }) => submission.id)
    )
    // Nothing new: no change, the same cursor, no more; and the same page again from the same cursor.
    const idle = await post(base, changesPath, { ...body, after: read.next })
    expect(idle.json).toEqual({ changes: [], next: read.next, hasMore: false })
    expect(idle.headers.get("cache-control")).toBe("no-store")
    expect(idle.headers.get("ratelimit-policy")).toMatch(/"api-key";q=\d+;w=60/)
  })

  it("shows a backdated append after the changes before it, where the incremental read's cursor misses it", async () => {
    const body = { fileId: "journal", apiKey: "alice-key" }
    const feedEnd = (await follow(base, body)).next
    const readEnd = (await post(base, submissionsPath, { ...body, limit: 10_000 })).json.next
    await append("journal", [
      { createdDate: minute(-60), content: { n: "backdated" } },
      { createdDate: minute(30), content: { n: "later" } }
    ])
    const changes = await follow(base, { ...body, limit: 1 }, feedEnd)
    expect(told(changes.changes)).toEqual(["created backdated", "created later"])
    expect(changes.pages).toEqual([1, 1])
    const synced = await post(base, submissionsPath, { ...body, after: readEnd })
    expect(synced.json.submissions.map((submission: { content: { n: string } }) => submission.content.n)).toEqual([
      "later"
    ])
    // From the start, the backdated append is still after every change committed before it.
    expect(told((await follow(base, body)).changes).slice(-2)).toEqual(["created backdated", "created later"])
  })

  it("refuses on /after every text that is not a feed cursor of the file, an incremental read's cursor too", async () => {
    const body = { fileId: "journal", apiKey: "alice-key" }
    const submissionsCursor = (await post(base, submissionsPath, { ...body, limit: 1 })).json.next
    const otherFileCursor = (await follow(base, { fileId: "watched", apiKey: "alice-key" })).next
    for (const after of [submissionsCursor, otherFileCursor, "garbage", "", 7]) {
      const reply = await post(base, changesPath, { ...body, after })
      expect(reply.status, String(after)).toBe(422)
      expect(reply.headers.get("content-type")).toBe("application/problem+json")
      expect(reply.json).toMatchObject({ code: "validation_failed", status: 422 })
      expect(reply.json.errors.map((issue: { pointer: string }) => issue.pointer)).toEqual(["/after"])
    }
    const invalid = await post(base, changesPath, { ...body, limit: 0, wait: 31, since: minute(0) })
    expect(invalid.status).toBe(422)
    expect(invalid.json.errors.map((issue: { pointer: string }) => issue.pointer).sort()).toEqual([
      "/limit",
      "/since",
      "/wait"
    ])
    expect((await post(base, changesPath, "not json")).status).toBe(422)
  })

  it("403 and 404 as the other operations: unknown key, another's file, no file", async () => {
    for (const [payload, status, code] of [
      [{ fileId: "journal", apiKey: "guess" }, 403, "access_denied"],
      [{ fileId: "other", apiKey: "alice-key" }, 403, "access_denied"],
      [{ fileId: "nothing", apiKey: "alice-key" }, 404, "file_not_found"]
    ] as const) {
      const feed = await post(base, changesPath, payload)
      const read = await post(base, "/api/v1/file-data", payload)
      expect(feed.status).toBe(status)
      expect(feed.json.code).toBe(code)
      expect({ ...feed.json, instance: undefined }).toEqual({ ...read.json, instance: undefined })
    }
  })

  it("one quota with the other operations on the file", async () => {
    const limited = await InProcess.serve({ ...env, RATE_LIMIT_MAX: "2" })
    try {
      const payload = { fileId: "journal", apiKey: "alice-limited-key" }
      expect((await post(limited.base, changesPath, payload)).status).toBe(200)
      expect((await post(limited.base, "/api/v1/file-data", payload)).status).toBe(200)
      const refused = await post(limited.base, changesPath, payload)
      expect(refused.status).toBe(422)
      expect(refused.json.code).toBe("rate_limited")
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    } finally {
      await InProcess.stop(limited)
    }
  }, 60_000)

  it("answers a waiting request with the change an append commits, and the empty page when its wait is up", async () => {
    const body = { fileId: "watched", apiKey: "alice-wait-key" }
    const start = (await follow(base, body)).next
    const timedOut = await post(base, changesPath, { ...body, after: start, wait: 1 })
    expect(timedOut.json).toEqual({ changes: [], next: start, hasMore: false })

    const started = performance.now()
    let settled = false
    const waiting = post(base, changesPath, { ...body, after: start, wait: 30 }).finally(() => {
      settled = true
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(settled).toBe(false)
    await append("watched", [{ createdDate: minute(-600), content: { n: "woke" } }])
    const reply = await waiting
    expect(reply.status).toBe(200)
    expect(told(reply.json.changes)).toEqual(["created woke"])
    expect(reply.json.next).not.toBe(start)
    expect(performance.now() - started).toBeLessThan(20_000)
  }, 60_000)

  it("an erasure: a waiting request is answered with the erased change, and the created one leaves the feed", async () => {
    const body = { fileId: "watched", apiKey: "alice-wait-key" }
    await append("watched", [{ createdDate: minute(1), content: { n: "to-erase" } }])
    const before = await follow(base, body)
    const created = before.changes.find((change) => change.content?.n === "to-erase")
    expect(created?.type).toBe("submission.created")
    const waiting = post(base, changesPath, { ...body, after: before.next, wait: 30 })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const summary = await eraseThroughStore(env, "watched", { name: "n", value: "to-erase" })
    expect(summary.ids).toEqual([created.id])
    const reply = await waiting
    expect(reply.status).toBe(200)
    expect(reply.json.changes).toEqual([{ type: "submission.erased", id: created.id }])
    // From the start: no change carries the erased content, its erased change is where the erasure committed.
    const after = await follow(base, body)
    expect(JSON.stringify(after.changes)).not.toContain("to-erase")
    expect(after.changes.at(-1)).toEqual({ type: "submission.erased", id: created.id })
    expect(after.changes.filter((change) => change.id === created.id)).toHaveLength(1)
  }, 60_000)

  it("SIGTERM answers a waiting request at once with the empty page, next unchanged, and the server exits 0", async () => {
    const built = await Processes.serve(env)
    try {
      const body = { fileId: "watched", apiKey: "alice-wait-key" }
      const start = (await follow(built.base, body)).next
      const waiting = post(built.base, changesPath, { ...body, after: start, wait: 30 })
      await new Promise((resolve) => setTimeout(resolve, 500))
      const stopping = performance.now()
      const exit = Processes.stop(built)
      expect((await waiting).json).toEqual({ changes: [], next: start, hasMore: false })
      await exit
      expect(performance.now() - stopping).toBeLessThan(20_000)
    } finally {
      built.child.kill("SIGKILL")
    }
  }, 90_000)
})

const testDatabaseUrl = TestServices.databaseUrl
if (testDatabaseUrl === undefined) console.warn(`The change feed on PostgreSQL SKIPPED: ${TestServices.databaseUnset}`)

if (testDatabaseUrl === undefined) {
  describe("the change feed on two instances on one PostgreSQL", () => {
    it.skip(`SKIPPED: ${TestServices.databaseUnset}`, () => {})
  })
} else {
  describe("the change feed on two instances on one PostgreSQL", () => {
    let database: Awaited<ReturnType<typeof TestServices.temporaryDatabase>> | undefined
    let env: Record<string, string> = {}

    beforeAll(async () => {
      database = await TestServices.temporaryDatabase("filedata_changes")
      env = { DATABASE_URL: database.url, DATABASE_POOL_MAX: "4", PORT: "0", HOST: "127.0.0.1", RATE_LIMIT_MAX: "1000" }
      await TestServer.importInto(env, fixture)
    }, 60_000)

    afterAll(async () => {
      await database?.drop()
    }, 60_000)

    it("both instances give the same feed, and wake on an append committed through the other's database", async () => {
      const [a, b] = await Promise.all([InProcess.serve(env), InProcess.serve(env)])
      try {
        const body = { fileId: "journal", apiKey: "alice-key", limit: 4 }
        const [fromA, fromB] = await Promise.all([follow(a.base, body), follow(b.base, body)])
        expect(told(fromA.changes)).toEqual(journal.map(({ content }) => `created ${content.n}`))
        expect(fromB).toEqual(fromA)
        // A cursor of one instance continues on the other.
        const waiting = [a, b].map((served) => post(served.base, changesPath, { ...body, after: fromA.next, wait: 30 }))
        await new Promise((resolve) => setTimeout(resolve, 300))
        await appendThroughStore(env, "journal", [{ createdDate: minute(-5), content: { n: "pg-backdated" } }])
        for (const reply of await Promise.all(waiting)) {
          expect(reply.status).toBe(200)
          expect(told(reply.json.changes)).toEqual(["created pg-backdated"])
        }
      } finally {
        await Promise.all([InProcess.stop(a), InProcess.stop(b)])
      }
    }, 120_000)
  })
}
