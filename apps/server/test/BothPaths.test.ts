// The operations on a file (`POST /api/v1/file-data`, the incremental read at
// `POST /api/v1/file-data/submissions` and the change feed at `/changes`) have two implementations of their transport: the hot route of the Node
// server (`FileDataRoute`) and the HttpApi handlers (`Handlers.files`) that serve the API wherever it is mounted
// on a platform server alone. Every case below is sent to both, checked against the contract on each, and the
// two replies must be the same: status, header fields, body byte for byte.
import { createServer } from "node:http"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { FileData, SubmissionCursor } from "@filedata/core"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Server from "../src/Server.js"
import * as TestServer from "./utils/TestServer.js"

const submissions = Array.from({ length: 2_000 }, (_, i) => ({
  createdDate: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
  content: { email: `sender-${i}@example.com`, message: `message ${i} `.repeat(8) }
}))

// One key per case that counts against its quota, so that no case sees another's counts.
const keys = [
  "owner",
  "empty",
  "foreign",
  "missing",
  "many",
  "limited",
  "sync-page",
  "sync-window",
  "sync-empty",
  "sync-many",
  "sync-foreign",
  "sync-missing",
  "sync-next",
  "shared",
  "feed-page",
  "feed-next",
  "feed-cursor"
] as const

const fixture = {
  users: [
    { id: "alice", apiKeys: keys.map((key) => `alice-${key}`) },
    { id: "bob", apiKeys: ["bob-key"] }
  ],
  files: [
    {
      id: "contact",
      userId: "alice",
      name: 'Contact "form" ✓',
      creationDate: "2024-01-01T00:00:00.000Z",
      publicAvailability: true,
      VisitCounter: 10,
      submissions: [
        { createdDate: "2024-01-03T00:00:00.000Z", content: { email: "c@example.com" } },
        { createdDate: "2024-01-02T09:30:00.000Z", content: { z: "1", a: "2" } }
      ]
    },
    { id: "empty", userId: "alice", name: "Empty", creationDate: "2024-02-01T00:00:00.000Z" },
    { id: "bobs", userId: "bob", name: "Bob's", creationDate: "2024-03-01T00:00:00.000Z" },
    { id: "many", userId: "alice", name: "Many", creationDate: "2024-01-01T00:00:00.000Z", submissions }
  ]
}

const policy = {
  apiKey: { limit: 3, windowMillis: 60_000 },
  clientAddress: { limit: 1_000_000, windowMillis: 60_000 }
}

// The rate-limit fields count down to a reset in seconds; a clock that stands still makes them the same on
// both servers whenever the requests come.
const now = Date.UTC(2026, 0, 1)
const stillClock: Clock.Clock = {
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => now,
  unsafeCurrentTimeNanos: () => BigInt(now) * 1_000_000n,
  currentTimeMillis: Effect.succeed(now),
  currentTimeNanos: Effect.succeed(BigInt(now) * 1_000_000n),
  sleep: (duration) => Clock.make().sleep(duration)
}

const ports = () => TestServer.ports({ fixture, policy }).pipe(Layer.provide(Layer.setClock(stillClock)))

class Bases extends Context.Tag("BothPaths.test/Bases")<
  Bases,
  { readonly "hot route": string; readonly "HttpApi handler": string }
>() {}

const hot = Server.layer({ port: 0, host: "127.0.0.1", trustProxy: false, http: TestServer.httpLimits }).pipe(
  Layer.provide(ports())
)

const platformOnly = HttpApiBuilder.serve().pipe(
  Layer.provide(Server.routesLayer({ trustProxy: false })),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(ports())
)

// The platform's router is one layer value, shared within a layer graph: each server gets a graph of its own,
// or both would register the same routes on one router.
const isolated = <A, E>(self: Layer.Layer<A, E>): Layer.Layer<A, E> => Layer.scopedContext(Layer.build(self))

const bases = Layer.effect(
  Bases,
  Effect.gen(function* () {
    const { port } = yield* Server.Address
    const platform = (yield* HttpServer.HttpServer).address
    if (platform._tag !== "TcpAddress") throw new Error("the platform server listens on TCP")
    return {
      "hot route": `http://127.0.0.1:${port}`,
      "HttpApi handler": `http://127.0.0.1:${platform.port}`
    }
  })
).pipe(Layer.provide(Layer.merge(isolated(hot), isolated(platformOnly))))

interface Answer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly bytes: Buffer
  readonly json: any
}

const send = (base: string, path: string, init: RequestInit): Promise<Answer> =>
  fetch(`${base}${path}`, init).then(async (response) => {
    const bytes = Buffer.from(await response.arrayBuffer())
    let json: unknown
    try {
      json = JSON.parse(bytes.toString("utf8"))
    } catch {
      json = undefined
    }
    // The date is the only field that may differ between two replies a second apart.
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      if (name !== "date") headers[name] = value
    })
    return { status: response.status, headers, bytes, json }
  })

// Each server imported the fixture into its own database, where each submission got an id of its own: the
// replies are the same apart from them (ids have one length, and no reply here is compressed).
const withoutIds = (bytes: Buffer): Buffer =>
  Buffer.from(bytes.toString("latin1").replace(/"id":"sub_[A-Za-z0-9_-]+"/g, '"id":"sub_"'), "latin1")

/** The same request to both paths, one after the other; each answer checked by `check`, then the two compared. */
const both = (id: string, path: string, init: RequestInit, check: (answer: Answer) => void) =>
  Effect.flatMap(Bases, (urls) =>
    Effect.promise(async () => {
      const headers = { ...(init.headers as Record<string, string>), "x-request-id": `case-${id}` }
      const answers: Array<Answer> = []
      for (const [path_, base] of Object.entries(urls)) {
        const answer = await send(base, path, { ...init, headers })
        try {
          check(answer)
        } catch (error) {
          throw new Error(`${path_}: ${(error as Error).message}`)
        }
        answers.push(answer)
      }
      const [hotRoute, handler] = answers as [Answer, Answer]
      expect(handler.status).toBe(hotRoute.status)
      expect(handler.headers).toEqual(hotRoute.headers)
      expect(withoutIds(handler.bytes).equals(withoutIds(hotRoute.bytes))).toBe(true)
      return hotRoute
    })
  )

const post = (body: unknown, headers: Record<string, string> = { "content-type": "application/json" }) => ({
  method: "POST",
  headers,
  body: typeof body === "string" ? body : JSON.stringify(body)
})

const expectFields = (answer: Answer, contentType: string) => {
  expect(answer.headers["content-type"]).toBe(contentType)
  expect(answer.headers["x-content-type-options"]).toBe("nosniff")
  expect(answer.headers["cache-control"]).toBe("no-store")
  expect(answer.headers["x-request-id"]).toMatch(/^case-/)
  expect(answer.headers["ratelimit-policy"]).toBe('"api-key";q=3;w=60, "client-address";q=1000000;w=60')
  expect(answer.headers.ratelimit).toMatch(/^"client-address";r=\d+;t=60(, "api-key";r=\d;t=60)?$/)
}

const expectProblem = (status: number, code: string) => (answer: Answer) => {
  expect(answer.status).toBe(status)
  expectFields(answer, "application/problem+json")
  expect(answer.json).toMatchObject({ status, code, type: `urn:filedata:problem:${code}` })
  expect(typeof answer.json.title).toBe("string")
  expect(typeof answer.json.detail).toBe("string")
  expect(answer.bytes.toString()).not.toContain("alice-")
}

const api = "/api/v1/file-data"
const sync = "/api/v1/file-data/submissions"

const feed = "/api/v1/file-data/changes"

const expectSubmissions = (answer: Answer, submissions: ReadonlyArray<unknown>, hasMore: boolean) => {
  expect(answer.status).toBe(200)
  expectFields(answer, "application/json")
  expect(answer.headers.vary).toBe("Accept-Encoding")
  expect(Object.keys(answer.json)).toEqual(["submissions", "next", "hasMore"])
  // Each submission with its id first; both paths give the same bytes, so the same ids.
  for (const submission of answer.json.submissions) {
    expect(Object.keys(submission)[0]).toBe("id")
    expect(submission.id).toMatch(/^sub_[A-Za-z0-9_-]+$/)
  }
  expect(answer.json.submissions.map(({ id: _, ...submission }: Record<string, unknown>) => submission)).toEqual(
    submissions
  )
  expect(answer.json.next).toMatch(/^[A-Za-z0-9_-]+$/)
  expect(answer.json.hasMore).toBe(hasMore)
}

interface Case {
  readonly name: string
  readonly path?: string
  readonly init: RequestInit
  readonly check: (answer: Answer) => void
}

const cases: ReadonlyArray<Case> = [
  {
    name: "200: the owner gets the six fields, submissions ascending",
    init: post({ fileId: "contact", apiKey: "alice-owner" }),
    check: (answer) => {
      expect(answer.status).toBe(200)
      expectFields(answer, "application/json")
      expect(answer.headers["content-length"]).toBe(String(answer.bytes.length))
      expect(answer.json).toEqual({
        name: 'Contact "form" ✓',
        creationDate: "2024-01-01T00:00:00.000Z",
        publicAvailability: true,
        SubmissionCounter: 2,
        VisitCounter: 10,
        submissions: [
          { createdDate: "2024-01-02T09:30:00.000Z", content: { z: "1", a: "2" } },
          { createdDate: "2024-01-03T00:00:00.000Z", content: { email: "c@example.com" } }
        ]
      })
    }
  },
  {
    name: "200: a file without submissions",
    init: post({ fileId: "empty", apiKey: "alice-empty" }),
    check: (answer) => {
      expect(answer.status).toBe(200)
      expect(answer.json).toMatchObject({ name: "Empty", SubmissionCounter: 0, submissions: [] })
    }
  },
  {
    name: "200: a reply of many pieces is streamed",
    init: post({ fileId: "many", apiKey: "alice-many" }),
    check: (answer) => {
      expect(answer.status).toBe(200)
      expectFields(answer, "application/json")
      expect(answer.headers["transfer-encoding"]).toBe("chunked")
      expect(answer.json.submissions).toHaveLength(submissions.length)
      expect(answer.json.submissions.at(-1)).toEqual(submissions.at(-1))
    }
  },
  {
    name: "403: a key that matches no key",
    init: post({ fileId: "contact", apiKey: "nobody" }),
    check: expectProblem(403, "access_denied")
  },
  {
    name: "403: a valid key for another user's file",
    init: post({ fileId: "bobs", apiKey: "alice-foreign" }),
    check: expectProblem(403, "access_denied")
  },
  {
    name: "404: a valid key and no file with that id",
    init: post({ fileId: "no-such-file", apiKey: "alice-missing" }),
    check: expectProblem(404, "file_not_found")
  },
  {
    name: "422: malformed JSON",
    init: post('{"fileId": '),
    check: expectProblem(422, "validation_failed")
  },
  {
    name: "422: an unknown field",
    init: post({ fileId: "contact", apiKey: "alice-owner", extra: true }),
    check: (answer) => {
      expectProblem(422, "validation_failed")(answer)
      expect(answer.json.errors).toEqual([expect.objectContaining({ pointer: "/extra" })])
    }
  },
  {
    name: "422: a field missing",
    init: post({ fileId: "contact" }),
    check: (answer) => {
      expectProblem(422, "validation_failed")(answer)
      expect(answer.json.errors).toEqual([expect.objectContaining({ pointer: "/apiKey" })])
    }
  },
  {
    name: "422: the key in an Authorization header and not in the body, which says where it goes",
    init: post({ fileId: "contact" }, { "content-type": "application/json", authorization: "Bearer alice-owner" }),
    check: (answer) => {
      expectProblem(422, "validation_failed")(answer)
      const detail = 'is required: send the API key in the JSON body as "apiKey" (the Authorization header is ignored)'
      expect(answer.json.errors).toEqual([{ pointer: "/apiKey", detail }])
      expect(answer.json.detail).toBe(`/apiKey: ${detail}`)
      expect(answer.bytes.toString()).not.toContain("alice-owner")
    }
  },
  {
    name: "422: Content-Type text/plain",
    init: post({ fileId: "contact", apiKey: "alice-owner" }, { "content-type": "text/plain" }),
    check: expectProblem(422, "unsupported_media_type")
  },
  {
    name: "422: no Content-Type",
    init: { method: "POST", body: new Blob([JSON.stringify({ fileId: "contact", apiKey: "alice-owner" })]) },
    check: expectProblem(422, "unsupported_media_type")
  },
  {
    name: "422: a body over 64 KiB, and the connection closed",
    init: post({ fileId: "contact", apiKey: "alice-owner", pad: "x".repeat(70_000) }),
    check: (answer) => {
      expectProblem(422, "payload_too_large")(answer)
      expect(answer.headers.connection).toBe("close")
    }
  },
  {
    name: "404: any other path",
    path: "/api/v1/other",
    init: { method: "GET" },
    check: (answer) => {
      expect(answer.status).toBe(404)
      expect(answer.json).toMatchObject({ code: "not_found" })
      expect(answer.headers["x-request-id"]).toMatch(/^case-/)
    }
  },
  {
    name: "405: the operation's path with another method",
    path: api,
    init: { method: "GET" },
    check: (answer) => {
      expect(answer.status).toBe(405)
      expect(answer.json).toMatchObject({ code: "method_not_allowed" })
      expect(answer.headers.allow).toBe("POST")
    }
  },
  {
    name: "submissions 200: a page of limit submissions, more to come",
    path: sync,
    init: post({ fileId: "contact", apiKey: "alice-sync-page", limit: 1 }),
    check: (answer) => {
      expectSubmissions(answer, [{ createdDate: "2024-01-02T09:30:00.000Z", content: { z: "1", a: "2" } }], true)
      expect(answer.headers["content-length"]).toBe(String(answer.bytes.length))
    }
  },
  {
    name: "submissions 200: a window of createdDate",
    path: sync,
    init: post({
      fileId: "contact",
      apiKey: "alice-sync-window",
      since: "2024-01-03T00:00:00.000Z",
      until: "2024-01-04T01:00:00+01:00"
    }),
    check: (answer) =>
      expectSubmissions(
        answer,
        [{ createdDate: "2024-01-03T00:00:00.000Z", content: { email: "c@example.com" } }],
        false
      )
  },
  {
    name: "submissions 200: a file without submissions",
    path: sync,
    init: post({ fileId: "empty", apiKey: "alice-sync-empty" }),
    check: (answer) => expectSubmissions(answer, [], false)
  },
  {
    name: "submissions 200: a reply of many pieces is streamed",
    path: sync,
    init: post({ fileId: "many", apiKey: "alice-sync-many", limit: 1_500 }),
    check: (answer) => {
      expectSubmissions(answer, submissions.slice(0, 1_500), true)
      expect(answer.headers["transfer-encoding"]).toBe("chunked")
    }
  },
  {
    name: "changes 200: a page of limit changes from the file's first, more to come",
    path: feed,
    init: post({ fileId: "contact", apiKey: "alice-feed-page", limit: 1 }),
    check: (answer) => {
      expect(answer.status).toBe(200)
      expectFields(answer, "application/json")
      expect(Object.keys(answer.json)).toEqual(["changes", "next", "hasMore"])
      // Import order: the file's first change is the submission the fixture lists first.
      expect(answer.json.changes).toEqual([
        {
          type: "submission.created",
          id: expect.stringMatching(/^sub_/),
          createdDate: "2024-01-03T00:00:00.000Z",
          content: { email: "c@example.com" }
        }
      ])
      expect(answer.json.hasMore).toBe(true)
    }
  },
  {
    name: "changes 403: a valid key for another user's file",
    path: feed,
    init: post({ fileId: "bobs", apiKey: "alice-feed-cursor" }),
    check: expectProblem(403, "access_denied")
  },
  {
    name: "changes 422: an incremental read's cursor, limit and wait out of range, all named",
    path: feed,
    init: post({
      fileId: "contact",
      apiKey: "alice-feed-cursor",
      after: SubmissionCursor.encode(FileData.FileId.make("contact"), "1704187800000:2"),
      limit: 0,
      wait: 31
    }),
    check: (answer) => {
      expectProblem(422, "validation_failed")(answer)
      expect(answer.json.errors.map((issue: { pointer: string }) => issue.pointer).sort()).toEqual([
        "/after",
        "/limit",
        "/wait"
      ])
    }
  },
  {
    name: "submissions 403: a valid key for another user's file",
    path: sync,
    init: post({ fileId: "bobs", apiKey: "alice-sync-foreign" }),
    check: expectProblem(403, "access_denied")
  },
  {
    name: "submissions 403: a key that matches no key",
    path: sync,
    init: post({ fileId: "contact", apiKey: "nobody-sync" }),
    check: expectProblem(403, "access_denied")
  },
  {
    name: "submissions 404: a valid key and no file with that id",
    path: sync,
    init: post({ fileId: "no-such-file", apiKey: "alice-sync-missing" }),
    check: expectProblem(404, "file_not_found")
  },
  {
    name: "submissions 422: the key in an Authorization header only",
    path: sync,
    init: post({ fileId: "contact" }, { "content-type": "application/json", authorization: "Bearer alice-owner" }),
    check: (answer) => {
      expectProblem(422, "validation_failed")(answer)
      expect(answer.json.detail).toMatch(/^\/apiKey: is required: send the API key in the JSON body as "apiKey"/)
    }
  },
  {
    name: "submissions 422: malformed JSON",
    path: sync,
    init: post('{"fileId": '),
    check: expectProblem(422, "validation_failed")
  },
  {
    name: "submissions 422: an unknown field, a cursor that is none, limit and since out of range, all named",
    path: sync,
    init: post({
      fileId: "contact",
      apiKey: "alice-owner",
      after: "not-a-cursor",
      limit: 10_001,
      since: "2024-01-01",
      extra: 1
    }),
    check: (answer) => {
      expectProblem(422, "validation_failed")(answer)
      expect(answer.json.errors.map((issue: { pointer: string }) => issue.pointer).sort()).toEqual([
        "/after",
        "/extra",
        "/limit",
        "/since"
      ])
    }
  },
  {
    name: "submissions 422: Content-Type text/plain",
    path: sync,
    init: post({ fileId: "contact", apiKey: "alice-owner" }, { "content-type": "text/plain" }),
    check: expectProblem(422, "unsupported_media_type")
  },
  {
    name: "submissions 422: a body over 64 KiB, and the connection closed",
    path: sync,
    init: post({ fileId: "contact", apiKey: "alice-owner", after: "x".repeat(70_000) }),
    check: (answer) => {
      expectProblem(422, "payload_too_large")(answer)
      expect(answer.headers.connection).toBe("close")
    }
  },
  {
    name: "submissions 405: the path with another method",
    path: sync,
    init: { method: "GET" },
    check: (answer) => {
      expect(answer.status).toBe(405)
      expect(answer.json).toMatchObject({ code: "method_not_allowed" })
      expect(answer.headers.allow).toBe("POST")
    }
  },
  {
    name: "submissions 404: the path with a trailing slash",
    path: `${sync}/`,
    init: post({ fileId: "contact", apiKey: "alice-owner" }),
    check: (answer) => {
      expect(answer.status).toBe(404)
      expect(answer.json).toMatchObject({ code: "not_found" })
    }
  }
]

layer(bases, { excludeTestServices: true })("the hot route and the HttpApi handler", (it) => {
  cases.forEach(({ check, init, name, path }, index) => {
    it.effect(name, () => both(String(index), path ?? api, init, check))
  })

  it.effect("422: past the key's quota, with Retry-After", () =>
    Effect.gen(function* () {
      const body = post({ fileId: "contact", apiKey: "alice-limited" })
      for (let i = 0; i < policy.apiKey.limit; i++) {
        yield* both(`limited-${i}`, api, body, (answer) => expect(answer.status).toBe(200))
      }
      const refused = yield* both("limited", api, body, expectProblem(422, "rate_limited"))
      expect(refused.headers["retry-after"]).toBe("60")
      expect(refused.headers.ratelimit).toMatch(/"api-key";r=0;t=60$/)
      expect(refused.json.retryAfter).toBe(60)
    })
  )

  it.effect("submissions: next continues after the last submission, and an empty page keeps it", () =>
    Effect.gen(function* () {
      const body = { fileId: "contact", apiKey: "alice-sync-next", limit: 1 }
      const first = yield* both("next-1", sync, post(body), (answer) => expect(answer.json.hasMore).toBe(true))
      const second = yield* both("next-2", sync, post({ ...body, after: first.json.next }), (answer) =>
        expectSubmissions(
          answer,
          [{ createdDate: "2024-01-03T00:00:00.000Z", content: { email: "c@example.com" } }],
          false
        )
      )
      yield* both("next-3", sync, post({ ...body, after: second.json.next }), (answer) => {
        expectSubmissions(answer, [], false)
        expect(answer.json.next).toBe(second.json.next)
      })
    })
  )

  it.effect("changes: next continues after the last change, and an empty page keeps it", () =>
    Effect.gen(function* () {
      const body = { fileId: "contact", apiKey: "alice-feed-next", limit: 1 }
      const first = yield* both("feed-1", feed, post(body), (answer) => expect(answer.json.hasMore).toBe(true))
      const second = yield* both("feed-2", feed, post({ ...body, after: first.json.next }), (answer) => {
        expect(answer.json.changes.map((change: { content: object }) => change.content)).toEqual([{ z: "1", a: "2" }])
        expect(answer.json.hasMore).toBe(false)
      })
      yield* both("feed-3", feed, post({ ...body, after: second.json.next }), (answer) =>
        expect(answer.json).toEqual({ changes: [], next: second.json.next, hasMore: false })
      )
    })
  )

  it.effect("422: one quota for both operations, alternate requests counted together", () =>
    Effect.gen(function* () {
      const body = { fileId: "contact", apiKey: "alice-shared" }
      for (let i = 0; i < policy.apiKey.limit; i++) {
        yield* both(`shared-${i}`, i % 2 === 0 ? api : sync, post(body), (answer) => {
          expect(answer.status).toBe(200)
          expect(answer.headers.ratelimit).toMatch(new RegExp(`"api-key";r=${policy.apiKey.limit - 1 - i};t=60$`))
        })
      }
      for (const [name, path] of [
        ["sync", sync],
        ["api", api]
      ] as const) {
        const refused = yield* both(`shared-${name}`, path, post(body), expectProblem(422, "rate_limited"))
        expect(refused.headers["retry-after"]).toBe("60")
      }
    })
  )
})
