// The typed client of @filedata/client against the server: on the platform server alone (no hot route), the
// handler that embedders and other platform servers use, and on the whole server through `fetch`, as a
// client author runs it, the incremental read's sync loop included. Payloads are plain strings; refusals
// arrive as the typed failures.
import * as Net from "node:net"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import {
  ApiError,
  type ChangesReply,
  type FileData,
  FileDataClient,
  type GetChanges,
  type GetSubmissions,
  type SubmissionsReply
} from "@filedata/client"
import { OperatorStore } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Server from "../src/Server.js"
import * as TestServer from "./utils/TestServer.js"

const fixture = {
  users: [
    { id: "alice", apiKeys: ["alice-key", "alice-second-key"] },
    { id: "bob", apiKeys: ["bob-key"] }
  ],
  files: [
    {
      id: "contact",
      userId: "alice",
      name: "Contact",
      creationDate: "2024-01-01T00:00:00.000Z",
      submissions: [
        { createdDate: "2024-01-03T00:00:00.000Z", content: { b: "2" } },
        { createdDate: "2024-01-02T00:00:00.000Z", content: { a: "1", "7": "seven", ["__proto__"]: "x", "é ✓": "ü" } }
      ]
    }
  ]
}

const contact = {
  name: "Contact",
  creationDate: "2024-01-01T00:00:00.000Z",
  publicAvailability: false,
  SubmissionCounter: 2,
  VisitCounter: 0,
  submissions: [
    { createdDate: "2024-01-02T00:00:00.000Z", content: { "7": "seven", a: "1", ["__proto__"]: "x", "é ✓": "ü" } },
    { createdDate: "2024-01-03T00:00:00.000Z", content: { b: "2" } }
  ]
}

const platformOnly = HttpApiBuilder.serve().pipe(
  Layer.provide(Server.routesLayer({ trustProxy: false })),
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(TestServer.ports({ fixture }))
)

layer(platformOnly, { excludeTestServices: true })("the HttpApi on the platform server", (it) => {
  it.effect("the typed client gets the file, decoded by the API's own schema", () =>
    Effect.gen(function* () {
      const client = yield* FileDataClient.make({})
      const reply = yield* client.files.getFileData({ payload: { fileId: "contact", apiKey: "alice-key" } })
      expect(reply).toEqual(contact)
      expect(Object.keys(reply.submissions[0]?.content ?? {})).toEqual(["7", "a", "__proto__", "é ✓"])
    })
  )

  it.effect("refusals arrive as typed failures", () =>
    Effect.gen(function* () {
      const client = yield* FileDataClient.make({})
      const denied = yield* Effect.flip(client.files.getFileData({ payload: { fileId: "contact", apiKey: "bob-key" } }))
      expect(denied).toBeInstanceOf(ApiError.AccessDenied)
      expect(denied).toMatchObject({ _tag: "AccessDenied", status: 403, code: "access_denied" })
      const missing = yield* Effect.flip(client.files.getFileData({ payload: { fileId: "nope", apiKey: "alice-key" } }))
      expect(missing).toBeInstanceOf(ApiError.FileNotFound)
      expect(missing).toMatchObject({ _tag: "FileNotFound", status: 404, code: "file_not_found" })
      expect(yield* client.system.health()).toEqual({ status: "ok", rateLimiter: "memory", webhookDelivery: false })
    })
  )

  it.effect("its replies carry the rate-limit header fields too", () =>
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      for (const apiKey of ["alice-key", "bob-key"]) {
        const reply = yield* client.execute(
          HttpClientRequest.post("/api/v1/file-data").pipe(
            HttpClientRequest.bodyUnsafeJson({ fileId: "contact", apiKey })
          )
        )
        expect(reply.headers["ratelimit-policy"]).toMatch(/^"api-key";q=\d+;w=\d+, "client-address";q=\d+;w=\d+$/)
        expect(reply.headers.ratelimit).toMatch(/^"client-address";r=\d+;t=\d+, "api-key";r=\d+;t=\d+$/)
      }
    })
  )
})

// The whole server (hot route included) on a free port, with one request per key and window, and the
// client on `fetch` as `FileDataClient.layer` builds it.
const wholeServer = TestServer.layer({
  fixture,
  policy: { apiKey: { limit: 1, windowMillis: 60_000 }, clientAddress: { limit: 1_000, windowMillis: 60_000 } }
})

const clientOf = (transformClient?: (client: HttpClient.HttpClient) => HttpClient.HttpClient) =>
  Effect.flatMap(TestServer.url(""), (baseUrl) =>
    FileDataClient.make({ baseUrl, transformClient }).pipe(Effect.provide(FetchHttpClient.layer))
  )

layer(wholeServer)("the typed client on fetch against the whole server", (it) => {
  it.effect("200, 403 and 404 as the reply and the typed failures", () =>
    Effect.gen(function* () {
      const client = yield* clientOf()
      expect(yield* client.files.getFileData({ payload: { fileId: "contact", apiKey: "alice-key" } })).toEqual(contact)
      const denied = yield* Effect.flip(client.files.getFileData({ payload: { fileId: "contact", apiKey: "bob-key" } }))
      expect(denied._tag).toBe("AccessDenied")
      const missing = yield* Effect.flip(
        client.files.getFileData({ payload: { fileId: "nope", apiKey: "alice-second-key" } })
      )
      expect(missing._tag).toBe("FileNotFound")
      expect(missing.message).toBe("No file has this id")
    })
  )

  it.effect("a body the server refuses is ValidationFailed, with every issue", () =>
    Effect.gen(function* () {
      // The client's own schema refuses an empty field before sending; this sends one anyway.
      const client = yield* clientOf(
        HttpClient.mapRequest(HttpClientRequest.bodyText('{"fileId":"","apiKey":"k","x":1}', "application/json"))
      )
      const refused = yield* Effect.flip(client.files.getFileData({ payload: { fileId: "f", apiKey: "k" } }))
      expect(refused).toBeInstanceOf(ApiError.ValidationFailed)
      if (refused._tag !== "ValidationFailed") return
      expect(refused.code).toBe("validation_failed")
      expect(refused.errors).toEqual([
        { pointer: "/x", detail: "is not allowed" },
        { pointer: "/fileId", detail: "must be a non-empty string" }
      ])
      const wrongType = yield* clientOf(HttpClient.mapRequest(HttpClientRequest.bodyText("{}", "text/plain")))
      const unsupported = yield* Effect.flip(wrongType.files.getFileData({ payload: { fileId: "f", apiKey: "k" } }))
      expect(unsupported).toMatchObject({ _tag: "ValidationFailed", code: "unsupported_media_type" })
    })
  )

  it.effect("past the key's quota: RateLimited with the seconds to wait", () =>
    Effect.gen(function* () {
      const client = yield* clientOf()
      const payload = { fileId: "nope", apiKey: "limited-key" }
      expect((yield* Effect.flip(client.files.getFileData({ payload })))._tag).toBe("AccessDenied")
      const limited = yield* Effect.flip(client.files.getFileData({ payload }))
      expect(limited).toBeInstanceOf(ApiError.RateLimited)
      if (limited._tag !== "RateLimited") return
      expect(limited.code).toBe("rate_limited")
      expect(limited.retryAfter).toBeGreaterThanOrEqual(1)
      expect(limited.retryAfter).toBeLessThanOrEqual(60)
      expect(limited.message).toMatch(/^Too many requests for this API key; retry after \d+ s$/)
    })
  )

  it.effect("FileDataClient.layer: the client as a service on fetch", () =>
    Effect.gen(function* () {
      const baseUrl = yield* TestServer.url("")
      const health = yield* Effect.flatMap(FileDataClient.FileDataClient, (client) => client.system.health()).pipe(
        Effect.provide(FileDataClient.layer({ baseUrl }))
      )
      expect(health).toEqual({ status: "ok", rateLimiter: "memory", webhookDelivery: false })
    })
  )
})

// A file to sync: ten submissions, the last five on one instant, so that a page of four ends inside the tie.
const journal = Array.from({ length: 10 }, (_, i) => ({
  createdDate: new Date(Date.UTC(2024, 0, 1) + Math.min(i, 5) * 60_000).toISOString(),
  content: { entry: String(i) }
}))

const syncServer = TestServer.layer({
  fixture: {
    users: [{ id: "alice", apiKeys: ["alice-key"] }],
    files: [
      {
        id: "journal",
        userId: "alice",
        name: "Journal",
        creationDate: "2024-01-01T00:00:00.000Z",
        submissions: journal
      }
    ]
  }
})

interface Synced {
  readonly submissions: ReadonlyArray<FileData.Submission>
  readonly next: string
  readonly requests: number
}

// The submissions of an incremental read without their ids, each checked to have one.
const withoutIds = (submissions: ReadonlyArray<SubmissionsReply.IdentifiedSubmission>): Array<FileData.Submission> =>
  submissions.map(({ id, ...submission }) => {
    expect(id).toMatch(/^sub_/)
    return submission
  })

// A client's sync loop: pages of `limit` from `after` (or the start) until the reply says no more matched.
const sync = (client: FileDataClient.Client, limit: number, after?: string) =>
  Effect.gen(function* () {
    const submissions: Array<FileData.Submission> = []
    let cursor = after
    let requests = 0
    for (;;) {
      const payload: GetSubmissions.RequestJson = {
        fileId: "journal",
        apiKey: "alice-key",
        limit,
        ...(cursor === undefined ? {} : { after: cursor })
      }
      const page = yield* client.files.getSubmissions({ payload })
      requests++
      submissions.push(...withoutIds(page.submissions))
      cursor = page.next
      if (!page.hasMore) {
        const synced: Synced = { submissions, next: page.next, requests }
        return synced
      }
    }
  })

layer(syncServer)("the typed client's sync loop against the whole server", (it) => {
  it.effect("pages through with limit, then gets what was appended since from next", () =>
    Effect.gen(function* () {
      const client = yield* clientOf()
      const first = yield* sync(client, 4)
      expect(first.requests).toBe(3)
      expect(first.submissions).toEqual(journal)
      expect(first.submissions).toEqual(
        (yield* client.files.getFileData({ payload: { fileId: "journal", apiKey: "alice-key" } })).submissions
      )

      // Nothing new: an empty reply that keeps the cursor.
      const idle = yield* sync(client, 4, first.next)
      expect(idle).toEqual({ submissions: [], next: first.next, requests: 1 })

      // Appended through the operator store: one later, one on the last instant, one dated before it.
      const later = { createdDate: "2024-01-01T00:10:00.000Z", content: { entry: "later" } }
      const sameInstant = { createdDate: "2024-01-01T00:05:00.000Z", content: { entry: "same instant" } }
      const earlier = { createdDate: "2024-01-01T00:01:30.000Z", content: { entry: "earlier" } }
      const store = yield* OperatorStore.OperatorStore
      yield* store.appendSubmissions(
        yield* AppendDocument.decode({ files: [{ id: "journal", submissions: [later, sameInstant, earlier] }] })
      )

      // The cursor is past the earlier one's instant: it is not seen, the other two are, in reply order.
      const resumed = yield* sync(client, 4, first.next)
      expect(resumed.submissions).toEqual([sameInstant, later])
      expect(resumed.next).not.toBe(first.next)
      expect(yield* sync(client, 4, resumed.next)).toEqual({ submissions: [], next: resumed.next, requests: 1 })
      // A sync from the start sees all of them.
      const whole = yield* sync(client, 4)
      expect(whole.submissions).toEqual([...journal.slice(0, 2), earlier, ...journal.slice(2), sameInstant, later])
    })
  )

  it.effect("a cursor, a limit or a window the server refuses is refused by the client too, before sending", () =>
    Effect.gen(function* () {
      const base = { fileId: "journal", apiKey: "alice-key" }
      const payloads: ReadonlyArray<GetSubmissions.RequestJson> = [
        { ...base, after: "bm90IGEgY3Vyc29y" },
        { ...base, since: "2024-01-01" },
        { ...base, since: "2024-02-01T00:00:00Z", until: "2024-01-01T00:00:00Z" },
        { ...base, limit: 0 }
      ]
      const pointers = [["/after"], ["/since"], ["/until"], ["/limit"]]
      let sentRequests = 0
      const counted = yield* clientOf(HttpClient.tapRequest(() => Effect.sync(() => sentRequests++)))
      for (const [i, payload] of payloads.entries()) {
        // The client reads the body as the server does: it refuses without a request, with the same failure.
        const local = yield* Effect.flip(counted.files.getSubmissions({ payload }))
        expect(local).toBeInstanceOf(ApiError.ValidationFailed)
        // Sent anyway, the server refuses it naming the same field, in the same words.
        const sent = yield* clientOf(
          HttpClient.mapRequest(HttpClientRequest.bodyText(JSON.stringify(payload), "application/json"))
        )
        const refused = yield* Effect.flip(sent.files.getSubmissions({ payload: base }))
        expect(
          refused._tag === "ValidationFailed" ? refused.errors.map((issue) => issue.pointer) : refused._tag
        ).toEqual(pointers[i])
        expect({ ...local }).toEqual({ ...refused })
        expect(local.message).toBe(refused.message)
      }
      expect(sentRequests).toBe(0)
      // Caught by the tag a caller handles the server's refusal with.
      const caught = yield* counted.files
        .getSubmissions({ payload: { ...base, limit: 0 } })
        .pipe(Effect.catchTag("ValidationFailed", (refusal) => Effect.succeed(refusal.errors)))
      expect(caught).toEqual([{ pointer: "/limit", detail: expect.any(String) }])
    })
  )

  it.effect("the change feed: every change once in commit order, a backdated append after the rest", () =>
    Effect.gen(function* () {
      const client = yield* clientOf()
      const changes: Array<ChangesReply.ChangeJson> = []
      const feed = (after?: string) =>
        Effect.gen(function* () {
          let cursor = after
          for (;;) {
            const payload: GetChanges.RequestJson = {
              fileId: "journal",
              apiKey: "alice-key",
              limit: 3,
              ...(cursor === undefined ? {} : { after: cursor })
            }
            const page = yield* client.files.getChanges({ payload })
            changes.push(...page.changes)
            cursor = page.next
            if (!page.hasMore) return page.next
          }
        })
      const start = yield* feed()
      // The feed holds what the file holds: its submissions with the same ids as the incremental read's.
      const read = yield* client.files.getSubmissions({ payload: { fileId: "journal", apiKey: "alice-key" } })
      expect(changes.map((change) => change.id).sort()).toEqual(read.submissions.map(({ id }) => id).sort())
      expect(changes.every((change) => change.type === "submission.created")).toBe(true)
      expect(changes).toHaveLength(read.submissions.length)

      // FileDataClient.changes follows next itself, a reply at a time.
      const baseUrl = yield* TestServer.url("")
      const pages = yield* Stream.runCollect(
        FileDataClient.changes({ baseUrl }, { fileId: "journal", apiKey: "alice-key", limit: 3 }).pipe(
          Stream.provideLayer(FetchHttpClient.layer)
        )
      )
      const followed = Chunk.toReadonlyArray(pages)
      expect(followed.map((page) => page.hasMore)).toEqual(followed.map((_, i) => i < followed.length - 1))
      expect(followed.flatMap((page) => page.changes)).toEqual(changes)
      expect(followed.at(-1)?.next).toBe(start)

      const backdated = { createdDate: "2023-06-01T00:00:00.000Z", content: { entry: "backdated" } }
      const store = yield* OperatorStore.OperatorStore
      yield* store.appendSubmissions(
        yield* AppendDocument.decode({ files: [{ id: "journal", submissions: [backdated] }] })
      )
      changes.length = 0
      const next = yield* feed(start)
      expect(changes).toEqual([{ type: "submission.created", id: expect.stringMatching(/^sub_/), ...backdated }])
      expect(next).not.toBe(start)
      // The incremental read's cursor is refused by the feed, by the client before sending.
      let sentRequests = 0
      const counted = yield* clientOf(HttpClient.tapRequest(() => Effect.sync(() => sentRequests++)))
      const refused = yield* Effect.flip(
        counted.files.getChanges({ payload: { fileId: "journal", apiKey: "alice-key", after: read.next } })
      )
      expect(refused).toMatchObject({ _tag: "ValidationFailed", errors: [{ pointer: "/after" }] })
      expect(sentRequests).toBe(0)
    })
  )

  it.effect("a webhook operation's bad body is refused before sending, in the core's words", () =>
    Effect.gen(function* () {
      let sentRequests = 0
      const client = yield* clientOf(HttpClient.tapRequest(() => Effect.sync(() => sentRequests++)))
      const refused = yield* Effect.flip(
        client.webhooks.webhookDeliveries({ payload: { apiKey: "alice-key", id: "", limit: 0 } })
      )
      expect(refused).toBeInstanceOf(ApiError.ValidationFailed)
      expect(refused).toMatchObject({
        status: 422,
        code: "validation_failed",
        errors: [
          { pointer: "/id", detail: "must be a non-empty string" },
          { pointer: "/limit", detail: "must be an integer from 1 to 1000" }
        ]
      })
      expect(sentRequests).toBe(0)
    })
  )

  it.effect("an export's bad window is refused before sending as the server refuses it", () =>
    Effect.gen(function* () {
      const payload = { fileId: "journal", apiKey: "alice-key", format: "csv" as const, since: "yesterday" }
      const local = yield* Effect.flip((yield* clientOf()).files.exportSubmissions({ payload }))
      const sent = yield* clientOf(
        HttpClient.mapRequest(HttpClientRequest.bodyText(JSON.stringify(payload), "application/json"))
      )
      const refused = yield* Effect.flip(
        sent.files.exportSubmissions({ payload: { fileId: "journal", apiKey: "k", format: "csv" } })
      )
      expect(refused._tag).toBe("ValidationFailed")
      expect({ ...local }).toEqual({ ...refused })
    })
  )
})

layer(Layer.empty)("the typed client without a server", (it) => {
  it.effect("a refused connection is Unreachable, naming the address", () =>
    Effect.gen(function* () {
      // A port that was free a moment ago and has nothing listening on it now.
      const port = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            const probe = Net.createServer().listen(0, "127.0.0.1", () => {
              const { port } = probe.address() as Net.AddressInfo
              probe.close(() => resolve(port))
            })
          })
      )
      const baseUrl = `http://127.0.0.1:${port}`
      const client = yield* FileDataClient.make({ baseUrl }).pipe(Effect.provide(FetchHttpClient.layer))
      const failure = yield* Effect.flip(client.files.getFileData({ payload: { fileId: "f", apiKey: "k" } }))
      expect(failure).toBeInstanceOf(ApiError.Unreachable)
      expect(failure).toMatchObject({ _tag: "Unreachable", url: `${baseUrl}/api/v1/file-data`, reason: "ECONNREFUSED" })
      expect(failure.message).toBe(`${baseUrl}/api/v1/file-data cannot be reached (ECONNREFUSED)`)
      const health = yield* Effect.flip(client.system.health())
      expect(health._tag).toBe("Unreachable")
      const payload = { fileId: "f", apiKey: "k", format: "csv" as const }
      const streamed = yield* Effect.flip(
        Stream.runDrain(FileDataClient.exportBytes({ baseUrl }, payload)).pipe(Effect.provide(FetchHttpClient.layer))
      )
      expect(streamed).toMatchObject({ _tag: "Unreachable", url: `${baseUrl}/api/v1/file-data/export` })
      // A body the server would refuse is refused before any connection is tried.
      const invalid = yield* Effect.flip(
        Stream.runDrain(FileDataClient.exportBytes({ baseUrl }, { ...payload, since: "yesterday" })).pipe(
          Effect.provide(FetchHttpClient.layer)
        )
      )
      expect(invalid).toMatchObject({ _tag: "ValidationFailed", errors: [{ pointer: "/since" }] })
    })
  )
})
