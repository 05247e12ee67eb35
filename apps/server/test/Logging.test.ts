import { expect, layer } from "@effect/vitest"
import { Fixtures } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as TestServer from "./utils/TestServer.js"

const lines: Array<string> = []
const capture = Logger.map(Logger.jsonLogger, (line) => {
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
      for (const key of keys) expect(lines.join("\n")).not.toContain(key)
    })
  )
})
