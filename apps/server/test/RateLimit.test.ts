import { randomUUID } from "node:crypto"
import { expect, layer } from "@effect/vitest"
import { MemoryRateLimiter } from "@filedata/rate-limiter-memory"
import { RedisRateLimiter } from "@filedata/rate-limiter-redis"
import { Fixtures, TestServices } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as TestServer from "./utils/TestServer.js"

const fixture = Fixtures.aliceContact(["alice-key", "alice-second-key"])

// A Structured Field list of `"name";key=int;...` items, as the two RateLimit fields are, read strictly:
// anything else in the field fails the match.
const item = /^"([a-z-]+)"((?:;[a-z]+=\d+)+)$/
const parseList = (field: string | null): Record<string, Record<string, number>> => {
  expect(field).not.toBeNull()
  const entries = (field ?? "").split(", ").map((member) => {
    const match = item.exec(member)
    expect(match, member).not.toBeNull()
    const [, name = "", parameters = ""] = match ?? []
    const values = parameters
      .slice(1)
      .split(";")
      .map((parameter) => parameter.split("="))
      .map(([key = "", value = ""]) => [key, Number(value)] as const)
    return [name, Object.fromEntries(values)] as const
  })
  return Object.fromEntries(entries)
}

const policy = { "api-key": { q: 3, w: 60 }, "client-address": { q: 5, w: 60 } }

const expectRateLimited = (reply: TestServer.Reply) => {
  expect(reply.status).toBe(422)
  expect(reply.headers.get("content-type")).toBe("application/problem+json")
  expect(reply.json).toMatchObject({ status: 422, code: "rate_limited" })
  const retryAfter = Number(reply.headers.get("retry-after"))
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
  expect(reply.text).not.toContain("alice-key")
}

// On the test clock, which the limiter reads: a window ends when the test moves the clock past it.
layer(
  TestServer.layer({
    fixture,
    trustProxy: true,
    policy: { apiKey: { limit: 3, windowMillis: 1_000 }, clientAddress: { limit: 5, windowMillis: 1_000 } }
  })
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
      yield* TestClock.adjust("1100 millis")
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

// Windows long enough that none closes during the test, so every count is exact. In memory, and in Redis,
// where a request's two counts are one step (`RateLimiter.consumeRequest`) after the body was read.
const headerPolicy = {
  apiKey: { limit: 3, windowMillis: 60_000 },
  clientAddress: { limit: 5, windowMillis: 60_000 }
}
const limiters = {
  memory: MemoryRateLimiter.layer(headerPolicy),
  ...(TestServices.redisUrl === undefined
    ? {}
    : {
        Redis: RedisRateLimiter.layer({
          url: Redacted.make(TestServices.redisUrl),
          policy: headerPolicy,
          keyPrefix: `filedata-test:${randomUUID()}:`,
          failureMode: "closed"
        }).pipe(Layer.orDie)
      })
}
if (TestServices.redisUrl === undefined)
  console.warn(`Rate limit header fields on Redis SKIPPED: ${TestServices.redisUnset}`)

for (const [name, limiter] of Object.entries(limiters)) {
  layer(TestServer.layer({ fixture, trustProxy: true, limiter }), { excludeTestServices: true })(
    `rate limit header fields (${name})`,
    (it) => {
      it.effect(
        "every reply carries RateLimit-Policy and where the caller stands in each quota it was counted against",
        () =>
          Effect.gen(function* () {
            const call = (body: unknown) => TestServer.postJson(body, { "x-forwarded-for": "10.3.3.3" })
            const standings = [] as Array<Record<string, Record<string, number>>>
            for (const body of [
              { fileId: "contact", apiKey: "alice-key" },
              { fileId: "contact", apiKey: "nobody-key" },
              { fileId: "missing", apiKey: "alice-key" },
              "not json",
              { fileId: "contact", apiKey: "alice-key" },
              { fileId: "contact", apiKey: "alice-key" }
            ]) {
              const reply = yield* call(body)
              expect(parseList(reply.headers.get("ratelimit-policy"))).toEqual(policy)
              standings.push(parseList(reply.headers.get("ratelimit")))
            }
            const [ok, denied, missing, malformed, third, refused] = standings
            expect(ok?.["client-address"]).toMatchObject({ r: 4 })
            expect(ok?.["api-key"]).toMatchObject({ r: 2 })
            expect(denied?.["api-key"]).toMatchObject({ r: 2 })
            expect(missing?.["api-key"]).toMatchObject({ r: 1 })
            // No key was read from a malformed body, so only the address was counted.
            expect(Object.keys(malformed ?? {})).toEqual(["client-address"])
            expect(malformed?.["client-address"]).toMatchObject({ r: 1 })
            expect(third).toMatchObject({ "client-address": { r: 0 }, "api-key": { r: 0 } })
            // Refused by the address quota before the key was counted.
            expect(Object.keys(refused ?? {})).toEqual(["client-address"])
            for (const standing of standings) {
              for (const { t = -1 } of Object.values(standing)) expect(t > 0 && t <= 60).toBe(true)
            }
          })
      )
    }
  )
}
