import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestServer from "./utils/TestServer.js"

const fixture = {
  users: [{ id: "alice", apiKeys: ["alice-key", "alice-second-key"] }],
  files: [{ id: "contact", userId: "alice", name: "Contact", creationDate: "2024-01-01T00:00:00.000Z" }]
}

const expectRateLimited = (reply: TestServer.Reply) => {
  expect(reply.status).toBe(422)
  expect(reply.headers.get("content-type")).toBe("application/problem+json")
  expect(reply.json).toMatchObject({ status: 422, code: "rate_limited" })
  const retryAfter = Number(reply.headers.get("retry-after"))
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
  expect(reply.text).not.toContain("alice-key")
}

layer(
  TestServer.layer({
    fixture,
    trustProxy: true,
    policy: { apiKey: { limit: 3, windowMillis: 1_000 }, clientAddress: { limit: 5, windowMillis: 1_000 } }
  }),
  { excludeTestServices: true }
)("rate limits", (it) => {
  it.effect("the same API key past RATE_LIMIT_MAX gets 422 with Retry-After, until the window ends", () =>
    Effect.gen(function* () {
      const call = (address: string) =>
        TestServer.postJson({ fileId: "contact", apiKey: "alice-key" }, { "x-forwarded-for": address })
      // Each call from its own address, so only the key's quota is at stake.
      for (let i = 0; i < 3; i++) expect((yield* call(`10.0.0.${i}`)).status).toBe(200)
      expectRateLimited(yield* call("10.0.0.9"))
      // Other keys keep their own quota.
      const other = yield* TestServer.postJson(
        { fileId: "contact", apiKey: "alice-second-key" },
        { "x-forwarded-for": "10.0.0.10" }
      )
      expect(other.status).toBe(200)
      yield* Effect.sleep("1100 millis")
      expect((yield* call("10.0.0.11")).status).toBe(200)
    })
  )

  it.effect("one client address past RATE_LIMIT_IP_MAX gets 422, whatever the key", () =>
    Effect.gen(function* () {
      const call = (apiKey: string) =>
        TestServer.postJson({ fileId: "contact", apiKey }, { "x-forwarded-for": "192.0.2.1, 10.1.1.1" })
      for (let i = 0; i < 5; i++) expect((yield* call(`guess-${i}`)).status).toBe(403)
      expectRateLimited(yield* call("guess-5"))
      // The address counts, not the forged entries before the proxy's own.
      const elsewhere = yield* TestServer.postJson(
        { fileId: "contact", apiKey: "guess-6" },
        { "x-forwarded-for": "10.1.1.1, 10.1.1.2" }
      )
      expect(elsewhere.status).toBe(403)
    })
  )

  it.effect("invalid bodies count against the address too", () =>
    Effect.gen(function* () {
      const call = () => TestServer.postJson("not json", { "x-forwarded-for": "10.2.2.2" })
      for (let i = 0; i < 5; i++) expect((yield* call()).status).toBe(422)
      expectRateLimited(yield* call())
    })
  )
})
