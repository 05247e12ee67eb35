import { randomUUID } from "node:crypto"
import { describe, it } from "@effect/vitest"
import { RateLimiterConformance } from "@filedata/conformance"
import { TestServices } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { RedisRateLimiter } from "../src/index.js"

const url = TestServices.redisUrl

if (url === undefined) {
  const reason = TestServices.redisUnset
  console.warn(`RedisRateLimiter conformance SKIPPED: ${reason}`)
  describe("RateLimiter conformance: RedisRateLimiter", () => {
    it.skip(`SKIPPED: ${reason}`, () => {})
  })
} else {
  // Redis expires keys by its own clock, so the suite runs in real time; a fresh key prefix per limiter keeps
  // runs apart, and failing closed makes an unreachable Redis fail the suite instead of passing it silently.
  RateLimiterConformance.suite(
    "RedisRateLimiter",
    (policy) =>
      RedisRateLimiter.make({
        url: Redacted.make(url),
        policy,
        failureMode: "closed",
        keyPrefix: `filedata-test:${randomUUID()}:`
      }).pipe(Effect.orDie),
    { clock: "live" }
  )
}
