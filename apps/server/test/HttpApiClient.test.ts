// The HttpApi definition served by the platform alone (no hot route), driven by the typed client it
// generates: the handler that embedders and other platform servers use behaves as the contract says.
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { Fixtures } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { FileDataApi } from "../src/FileDataApi.js"
import * as Server from "../src/Server.js"
import * as TestServer from "./utils/TestServer.js"

const fixture = Fixtures.aliceContact(["alice-key"], {
  otherUsers: [{ id: "bob", apiKeys: ["bob-key"] }],
  submissions: [
    { createdDate: "2024-01-03T00:00:00.000Z", content: { b: "2" } },
    { createdDate: "2024-01-02T00:00:00.000Z", content: { a: "1" } }
  ]
})

const platformOnly = HttpApiBuilder.serve().pipe(
  Layer.provide(Server.routesLayer({ trustProxy: false })),
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(TestServer.ports({ fixture }))
)

const key = (text: string) => Redacted.make(text) as never

layer(platformOnly, { excludeTestServices: true })("the HttpApi on the platform server", (it) => {
  it.effect("the typed client gets the file, decoded by the API's own schema", () =>
    Effect.gen(function* () {
      const client = yield* HttpApiClient.make(FileDataApi)
      const reply = yield* client.files.getFileData({
        payload: { fileId: "contact" as never, apiKey: key("alice-key") }
      })
      expect(reply).toEqual({
        name: "Contact",
        creationDate: "2024-01-01T00:00:00.000Z",
        publicAvailability: false,
        SubmissionCounter: 2,
        VisitCounter: 0,
        submissions: [
          { createdDate: "2024-01-02T00:00:00.000Z", content: { a: "1" } },
          { createdDate: "2024-01-03T00:00:00.000Z", content: { b: "2" } }
        ]
      })
    })
  )

  it.effect("refusals arrive as the declared problem documents", () =>
    Effect.gen(function* () {
      const client = yield* HttpApiClient.make(FileDataApi)
      const denied = yield* Effect.flip(
        client.files.getFileData({ payload: { fileId: "contact" as never, apiKey: key("bob-key") } })
      )
      expect(denied).toMatchObject({ status: 403, code: "access_denied" })
      const missing = yield* Effect.flip(
        client.files.getFileData({ payload: { fileId: "nope" as never, apiKey: key("alice-key") } })
      )
      expect(missing).toMatchObject({ status: 404, code: "file_not_found" })
      const health = yield* client.system.health()
      expect(health).toEqual({ status: "ok", rateLimiter: "memory" })
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
