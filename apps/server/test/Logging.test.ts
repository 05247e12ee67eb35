import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { Logging } from "@filedata/runtime"
import { Fixtures } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Server from "../src/Server.js"
import * as TestServer from "./utils/TestServer.js"

// The lines as the service writes them (`Logging.layer`).
const lines: Array<string> = []
const capture = Logger.map(Logging.jsonLines, (line) => {
  lines.push(line)
})

const fixture = Fixtures.aliceContact(["alice-secret-key"])

const server = TestServer.layer({ fixture }).pipe(
  Layer.provide(Layer.merge(Logger.replace(Logger.defaultLogger, capture), Logger.minimumLogLevel(LogLevel.All)))
)

layer(server, { excludeTestServices: true })("logs", (it) => {
  it.effect("one JSON line per request with its request id, and never an API key", () =>
    Effect.gen(function* () {
      const keys = ["alice-secret-key", "guessed-secret-key"]
      yield* TestServer.postJson({ fileId: "contact", apiKey: keys[0] }, { "x-request-id": "req-ok" })
      yield* TestServer.postJson({ fileId: "contact", apiKey: keys[1] }, { "x-request-id": "req-denied" })
      yield* TestServer.postJson({ fileId: "contact", apiKey: keys[0], extra: keys[1] }, { "x-request-id": "req-bad" })
      yield* TestServer.postJson(`{"fileId":"contact","apiKey":"${keys[1]}"`, { "x-request-id": "req-broken" })

      const entries = lines.map((line) => JSON.parse(line))
      for (const [requestId, status] of [
        ["req-ok", 200],
        ["req-denied", 403],
        ["req-bad", 422],
        ["req-broken", 422]
      ] as const) {
        expect(entries).toContainEqual(
          expect.objectContaining({
            message: "request",
            annotations: expect.objectContaining({ requestId, status, method: "POST", path: "/api/v1/file-data" })
          })
        )
      }
      const line = (requestId: string) =>
        entries.find((entry) => entry.message === "request" && entry.annotations.requestId === requestId)?.annotations
      expect(line("req-ok")).toMatchObject({ clientAddress: "127.0.0.1", fileId: "contact", userId: "alice" })
      expect(line("req-ok")).not.toHaveProperty("code")
      expect(line("req-denied")).toMatchObject({ fileId: "contact", code: "access_denied" })
      expect(line("req-denied")).not.toHaveProperty("userId")
      expect(line("req-bad")).toMatchObject({ code: "validation_failed" })
      for (const key of keys) expect(lines.join("\n")).not.toContain(key)
    })
  )
})

const platformLines: Array<string> = []
const platformOnly = HttpApiBuilder.serve().pipe(
  Layer.provide(Server.routesLayer({ trustProxy: true })),
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(TestServer.ports({ fixture })),
  Layer.provide(
    Layer.merge(
      Logger.replace(
        Logger.defaultLogger,
        Logger.map(Logging.jsonLines, (line) => void platformLines.push(line))
      ),
      Logger.minimumLogLevel(LogLevel.All)
    )
  )
)

layer(platformOnly, { excludeTestServices: true })("logs of the HttpApi on the platform server", (it) => {
  it.effect("the same fields on the same line: client address, file, user, problem code", () =>
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      const post = (body: unknown, requestId: string) =>
        client.execute(
          HttpClientRequest.post("/api/v1/file-data").pipe(
            HttpClientRequest.bodyUnsafeJson(body),
            HttpClientRequest.setHeaders({ "x-request-id": requestId, "x-forwarded-for": "::ffff:192.0.2.9" })
          )
        )
      yield* post({ fileId: "contact", apiKey: "alice-secret-key" }, "platform-ok")
      yield* post({ fileId: "nothing", apiKey: "alice-secret-key" }, "platform-missing")
      yield* client.execute(
        HttpClientRequest.get("/nowhere").pipe(HttpClientRequest.setHeader("x-request-id", "platform-nowhere"))
      )
      const line = (requestId: string) =>
        platformLines
          .map((text) => JSON.parse(text))
          .find((entry) => entry.message === "request" && entry.annotations.requestId === requestId)?.annotations
      expect(line("platform-ok")).toMatchObject({
        status: 200,
        clientAddress: "192.0.2.9",
        fileId: "contact",
        userId: "alice"
      })
      expect(line("platform-missing")).toMatchObject({
        status: 404,
        fileId: "nothing",
        userId: "alice",
        code: "file_not_found"
      })
      expect(line("platform-nowhere")).toMatchObject({ status: 404, code: "not_found" })
      expect(platformLines.join("\n")).not.toContain("alice-secret-key")
    })
  )
})
