import { request as rawRequest } from "node:http"
import * as OpenApi from "@effect/platform/OpenApi"
import { expect, layer } from "@effect/vitest"
import { FileDataApi } from "@filedata/client"
import * as Effect from "effect/Effect"
import * as Server from "../src/Server.js"
import * as TestServer from "./utils/TestServer.js"

const fixture = {
  users: [
    { id: "alice", apiKeys: ["alice-key", "alice-old-key"] },
    { id: "bob", apiKeys: ["bob-key"] }
  ],
  files: [
    {
      id: "contact",
      userId: "alice",
      name: 'Contact "form" ✓',
      creationDate: "2024-01-01T01:30:00+01:00",
      publicAvailability: true,
      VisitCounter: 10,
      submissions: [
        { createdDate: "2024-01-03T00:00:00.000Z", content: { email: "c@example.com" } },
        {
          createdDate: "2024-01-02T09:30:00.000Z",
          // Parsed, not a literal: in a literal `__proto__` would set the prototype instead of a key.
          content: JSON.parse('{"email":"a@example.com","__proto__":"x","":"empty"}')
        },
        { createdDate: "2024-01-02T09:30:00.000Z", content: { z: "1", a: "2" } }
      ]
    },
    { id: "empty", userId: "alice", name: "Empty", creationDate: "2024-02-01T00:00:00.000Z" },
    { id: "bobs", userId: "bob", name: "Bob's", creationDate: "2024-03-01T00:00:00.000Z", SubmissionCounter: 7 }
  ]
}

// The first key of the fixture gets id "1", so the second ("alice-old-key") is "2".
const server = TestServer.layer({ fixture, revoke: ["2"] })

const expectProblem = (reply: TestServer.Reply, status: number, code: string) => {
  expect(reply.status).toBe(status)
  expect(reply.headers.get("content-type")).toBe("application/problem+json")
  expect(reply.json).toMatchObject({ status, code })
  expect(typeof reply.json.type).toBe("string")
  expect(typeof reply.json.title).toBe("string")
  expect(typeof reply.json.detail).toBe("string")
}

layer(server, { excludeTestServices: true })("POST /api/v1/file-data", (it) => {
  it.effect("200: the owner gets exactly the six fields, submissions ascending, ties in insertion order", () =>
    Effect.gen(function* () {
      const reply = yield* TestServer.postJson({ fileId: "contact", apiKey: "alice-key" })
      expect(reply.status).toBe(200)
      expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
      expect(reply.headers.get("cache-control")).toBe("no-store")
      expect(reply.headers.get("x-content-type-options")).toBe("nosniff")
      expect(Object.keys(reply.json)).toEqual([
        "name",
        "creationDate",
        "publicAvailability",
        "SubmissionCounter",
        "VisitCounter",
        "submissions"
      ])
      expect(reply.json).toEqual({
        name: 'Contact "form" ✓',
        creationDate: "2024-01-01T00:30:00.000Z",
        publicAvailability: true,
        SubmissionCounter: 3,
        VisitCounter: 10,
        submissions: [
          {
            createdDate: "2024-01-02T09:30:00.000Z",
            content: JSON.parse('{"email":"a@example.com","__proto__":"x","":"empty"}')
          },
          { createdDate: "2024-01-02T09:30:00.000Z", content: { z: "1", a: "2" } },
          { createdDate: "2024-01-03T00:00:00.000Z", content: { email: "c@example.com" } }
        ]
      })
      expect(Object.keys(reply.json.submissions[1].content)).toEqual(["z", "a"])
      expect(reply.text).toContain('"__proto__":"x"')
    })
  )

  it.effect("200: a file without submissions has an empty list; defaults apply", () =>
    Effect.gen(function* () {
      const reply = yield* TestServer.postJson({ fileId: "empty", apiKey: "alice-key" })
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({
        name: "Empty",
        creationDate: "2024-02-01T00:00:00.000Z",
        publicAvailability: false,
        SubmissionCounter: 0,
        VisitCounter: 0,
        submissions: []
      })
    })
  )

  it.effect("reading never changes a counter", () =>
    Effect.gen(function* () {
      const first = yield* TestServer.postJson({ fileId: "bobs", apiKey: "bob-key" })
      const second = yield* TestServer.postJson({ fileId: "bobs", apiKey: "bob-key" })
      expect(first.json).toEqual(second.json)
      expect(second.json).toMatchObject({ SubmissionCounter: 7, VisitCounter: 0 })
    })
  )

  it.effect("403: a key that matches no key, even for a file that does not exist", () =>
    Effect.gen(function* () {
      expectProblem(yield* TestServer.postJson({ fileId: "contact", apiKey: "nobody" }), 403, "access_denied")
      expectProblem(yield* TestServer.postJson({ fileId: "no-such-file", apiKey: "nobody" }), 403, "access_denied")
    })
  )

  it.effect("403: a revoked key", () =>
    Effect.gen(function* () {
      expectProblem(yield* TestServer.postJson({ fileId: "contact", apiKey: "alice-old-key" }), 403, "access_denied")
    })
  )

  it.effect("403: a valid key for another user's file", () =>
    Effect.gen(function* () {
      expectProblem(yield* TestServer.postJson({ fileId: "bobs", apiKey: "alice-key" }), 403, "access_denied")
      expectProblem(yield* TestServer.postJson({ fileId: "contact", apiKey: "bob-key" }), 403, "access_denied")
    })
  )

  it.effect("404: a valid key and no file with that id", () =>
    Effect.gen(function* () {
      expectProblem(yield* TestServer.postJson({ fileId: "no-such-file", apiKey: "bob-key" }), 404, "file_not_found")
    })
  )

  const invalidBodies: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
    ["not JSON", '{"fileId": ', [""]],
    ["empty", "", [""]],
    ["an array", "[]", [""]],
    ["a string", '"contact"', [""]],
    ["null", "null", [""]],
    ["a number", "42", [""]],
    ["missing fileId", JSON.stringify({ apiKey: "alice-key" }), ["/fileId"]],
    ["missing apiKey", JSON.stringify({ fileId: "contact" }), ["/apiKey"]],
    ["missing both", "{}", ["/fileId", "/apiKey"]],
    ["fileId not a string", JSON.stringify({ fileId: 1, apiKey: "alice-key" }), ["/fileId"]],
    ["apiKey not a string", JSON.stringify({ fileId: "contact", apiKey: ["alice-key"] }), ["/apiKey"]],
    ["fileId null", JSON.stringify({ fileId: null, apiKey: "alice-key" }), ["/fileId"]],
    ["empty fileId", JSON.stringify({ fileId: "", apiKey: "alice-key" }), ["/fileId"]],
    ["empty apiKey", JSON.stringify({ fileId: "contact", apiKey: "" }), ["/apiKey"]],
    ["an unknown field", JSON.stringify({ fileId: "contact", apiKey: "alice-key", extra: true }), ["/extra"]]
  ]
  for (const [name, body, pointers] of invalidBodies) {
    it.effect(`422: body ${name}`, () =>
      Effect.gen(function* () {
        const reply = yield* TestServer.postJson(body)
        expectProblem(reply, 422, "validation_failed")
        expect(reply.json.errors.map((issue: { pointer: string }) => issue.pointer)).toEqual(pointers)
        expect(reply.text).not.toContain("alice-key")
      })
    )
  }

  for (const contentType of [undefined, "text/plain", "application/x-www-form-urlencoded", "application/jsonx"]) {
    it.effect(`422: Content-Type ${contentType ?? "missing"}`, () =>
      Effect.gen(function* () {
        const body = new Blob([JSON.stringify({ fileId: "contact", apiKey: "alice-key" })])
        const reply = yield* TestServer.request("/api/v1/file-data", {
          method: "POST",
          headers: contentType === undefined ? {} : { "content-type": contentType },
          body
        })
        expectProblem(reply, 422, "unsupported_media_type")
      })
    )
  }

  it.effect("200: Content-Type with a charset parameter", () =>
    Effect.gen(function* () {
      const reply = yield* TestServer.postJson(
        { fileId: "empty", apiKey: "alice-key" },
        { "content-type": "Application/JSON; charset=utf-8" }
      )
      expect(reply.status).toBe(200)
    })
  )

  it.effect("422: a body over 64 KiB, announced by Content-Length", () =>
    Effect.gen(function* () {
      const reply = yield* TestServer.postJson({ fileId: "contact", apiKey: "alice-key", pad: "x".repeat(70_000) })
      expectProblem(reply, 422, "payload_too_large")
    })
  )

  it.effect("422: a chunked body over 64 KiB, without Content-Length", () =>
    Effect.gen(function* () {
      const href = new URL(yield* TestServer.url("/api/v1/file-data"))
      const reply = yield* Effect.async<{ status: number; body: string }>((resume) => {
        const req = rawRequest({ host: href.hostname, port: href.port, path: href.pathname, method: "POST" }, (res) => {
          let body = ""
          res.setEncoding("utf8")
          res.on("data", (chunk) => (body += chunk))
          res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
        })
        req.on("error", () => {})
        req.setHeader("content-type", "application/json")
        req.setHeader("transfer-encoding", "chunked")
        for (let i = 0; i < 80; i++) req.write("x".repeat(1024))
        req.end()
      })
      expect(reply.status).toBe(422)
      expect(JSON.parse(reply.body)).toMatchObject({ code: "payload_too_large" })
    })
  )

  it.effect("a body of exactly 64 KiB is read", () =>
    Effect.gen(function* () {
      const base = JSON.stringify({ fileId: "empty", apiKey: "alice-key" })
      const body = base.slice(0, -1) + " ".repeat(64 * 1024 - base.length) + "}"
      expect(Buffer.byteLength(body)).toBe(64 * 1024)
      const reply = yield* TestServer.postJson(body)
      expect(reply.status).toBe(200)
    })
  )

  it.effect("404 with a problem for any other path; 405 with Allow for another method", () =>
    Effect.gen(function* () {
      expectProblem(yield* TestServer.request("/api/v1/other"), 404, "not_found")
      expectProblem(yield* TestServer.request("/api/v1/file-data/"), 404, "not_found")
      for (const path of ["/api/v1/file-data/", "/API/V1/FILE-DATA", "/Health"]) {
        expectProblem(
          yield* TestServer.postJson({ fileId: "contact", apiKey: "alice-key" }, {}, path),
          404,
          "not_found"
        )
      }
      const docs = yield* TestServer.request("/docs")
      expect(docs.status).toBe(200)
      for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
        const reply = yield* TestServer.request("/api/v1/file-data", { method })
        expectProblem(reply, 405, "method_not_allowed")
        expect(reply.headers.get("allow")).toBe("POST")
      }
      const health = yield* TestServer.request("/health", { method: "POST" })
      expectProblem(health, 405, "method_not_allowed")
      expect(health.headers.get("allow")).toBe("GET, HEAD")
    })
  )

  it.effect("GET /health answers 200 while the database answers, and says how the rate limiter counts", () =>
    Effect.gen(function* () {
      const reply = yield* TestServer.request("/health")
      expect(reply.status).toBe(200)
      expect(reply.json).toEqual({ status: "ok", rateLimiter: "memory", webhookDelivery: false })
    })
  )

  it.effect("GET /openapi.json documents the operation, its payload and its problems", () =>
    Effect.gen(function* () {
      const reply = yield* TestServer.request("/openapi.json")
      expect(reply.status).toBe(200)
      const operation = reply.json.paths["/api/v1/file-data"].post
      expect(Object.keys(operation.responses).sort()).toEqual(["200", "403", "404", "415", "422", "500", "503"])
      // The 415 of a compressed body is answered before any count (docs/api.md#http-details).
      const { "415": _unsupportedCoding, ...counted } = operation.responses
      for (const response of Object.values<{ headers: object }>(counted)) {
        expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(["RateLimit-Policy", "RateLimit"]))
      }
      expect(reply.json.paths["/health"].get).toBeDefined()
      expect(reply.json).toEqual(OpenApi.fromApi(FileDataApi.FileDataApi))
    })
  )

  it.effect("every reply carries a request id; a sane incoming one is kept", () =>
    Effect.gen(function* () {
      const reply = yield* TestServer.request("/health", { headers: { "x-request-id": "trace-123" } })
      expect(reply.headers.get("x-request-id")).toBe("trace-123")
      const generated = yield* TestServer.request("/health", { headers: { "x-request-id": "bad id with spaces" } })
      expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    })
  )

  it.effect("the listener is on loopback", () =>
    Effect.gen(function* () {
      expect(yield* Server.Address).toMatchObject({ hostname: "127.0.0.1" })
    })
  )
})
