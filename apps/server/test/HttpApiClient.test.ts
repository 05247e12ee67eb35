// The typed client of @filedata/client against the server: on the platform server alone (no hot route), the
// handler that embedders and other platform servers use, and on the whole server through `fetch`, as a
// client author runs it. Payloads are plain strings; refusals arrive as the typed failures.
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { ApiError, FileDataClient } from "@filedata/client"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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
      expect(yield* client.system.health()).toEqual({ status: "ok", rateLimiter: "memory" })
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
      expect(health).toEqual({ status: "ok", rateLimiter: "memory" })
    })
  )
})
