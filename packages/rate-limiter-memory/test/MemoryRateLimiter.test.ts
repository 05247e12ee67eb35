import { describe, expect, it } from "@effect/vitest"
import type { FileData, RateLimiter } from "@filedata/core"
import { ManualClock } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { MemoryRateLimiter } from "../src/index.js"

const key = (text: string): RateLimiter.RateLimitSubject => ({
  scope: "apiKey",
  apiKey: Redacted.make(text as typeof FileData.ApiKeyText.Type)
})
const address = (text: string): RateLimiter.RateLimitSubject => ({ scope: "clientAddress", address: text })

const policy = (limit: number, windowMillis: number): RateLimiter.RateLimitPolicy => ({
  apiKey: { limit, windowMillis },
  clientAddress: { limit, windowMillis }
})

// One arrival: how long after the previous one it comes, and which of a few subjects sends it.
const arrivals = FastCheck.array(
  FastCheck.record({ gap: FastCheck.integer({ min: 0, max: 400 }), subject: FastCheck.integer({ min: 0, max: 3 }) }),
  { maxLength: 200 }
)

describe("MemoryRateLimiter", () => {
  it.effect.prop(
    "never admits more than the limit in a window",
    { arrivals, limit: FastCheck.integer({ min: 1, max: 5 }), windowMillis: FastCheck.integer({ min: 1, max: 1000 }) },
    ({ arrivals, limit, windowMillis }) =>
      Effect.gen(function* () {
        // Thousands of steps per run: a manual clock moves at no cost, TestClock.adjust takes timer turns.
        const time = ManualClock.make()
        const limiter = yield* Effect.withClock(MemoryRateLimiter.make(policy(limit, windowMillis)), time.clock)
        const admitted = new Map<number, Array<number>>()
        let now = 0
        for (const { gap, subject } of arrivals) {
          time.advance(gap)
          now += gap
          const result = yield* Effect.either(limiter.consume(key(`key-${subject}`)))
          if (Either.isRight(result)) {
            admitted.set(subject, [...(admitted.get(subject) ?? []), now])
          } else {
            expect(result.left.retryAfterMillis).toBeGreaterThan(0)
            expect(result.left.retryAfterMillis).toBeLessThanOrEqual(windowMillis)
          }
        }
        // A window opens with the first admitted request after the previous window closed.
        for (const times of admitted.values()) {
          let opened = Number.NEGATIVE_INFINITY
          let inWindow = 0
          for (const t of times) {
            if (t >= opened + windowMillis) {
              opened = t
              inWindow = 0
            }
            inWindow++
            expect(inWindow).toBeLessThanOrEqual(limit)
          }
        }
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect("admits the limit, refuses with the time left, and admits again when the window ends", () =>
    Effect.gen(function* () {
      const limiter = yield* MemoryRateLimiter.make(policy(3, 60_000))
      expect(yield* limiter.consume(key("k"))).toEqual({
        scope: "apiKey",
        limit: 3,
        windowMillis: 60_000,
        remaining: 2,
        resetMillis: 60_000
      })
      yield* TestClock.adjust(5_000)
      expect(yield* limiter.consume(key("k"))).toMatchObject({ remaining: 1, resetMillis: 55_000 })
      expect(yield* limiter.consume(key("k"))).toMatchObject({ remaining: 0 })
      yield* TestClock.adjust(15_000)
      const refused = yield* Effect.flip(limiter.consume(key("k")))
      expect(refused).toMatchObject({ _tag: "RateLimited", scope: "apiKey", limit: 3, retryAfterMillis: 40_000 })
      yield* TestClock.adjust(39_999)
      yield* Effect.flip(limiter.consume(key("k")))
      yield* TestClock.adjust(1)
      yield* limiter.consume(key("k"))
    })
  )

  it.effect("a burst at a window's end cannot borrow the next window's quota", () =>
    Effect.gen(function* () {
      const limiter = yield* MemoryRateLimiter.make(policy(2, 1_000))
      yield* TestClock.adjust(999)
      yield* limiter.consume(key("k"))
      yield* limiter.consume(key("k"))
      yield* TestClock.adjust(2)
      // A global clock-aligned window would have reset here; this one opened at 999 and runs to 1999.
      yield* Effect.flip(limiter.consume(key("k")))
    })
  )

  it.effect("keys and addresses are counted apart, each subject on its own", () =>
    Effect.gen(function* () {
      const limiter = yield* MemoryRateLimiter.make({
        apiKey: { limit: 1, windowMillis: 1_000 },
        clientAddress: { limit: 2, windowMillis: 1_000 }
      })
      yield* limiter.consume(key("same-text"))
      yield* limiter.consume(address("same-text"))
      yield* limiter.consume(address("same-text"))
      yield* limiter.consume(key("other"))
      expect(yield* Effect.flip(limiter.consume(key("same-text")))).toMatchObject({ scope: "apiKey", limit: 1 })
      expect(yield* Effect.flip(limiter.consume(address("same-text")))).toMatchObject({
        scope: "clientAddress",
        limit: 2
      })
    })
  )

  it.effect("long keys are counted like short ones", () =>
    Effect.gen(function* () {
      const limiter = yield* MemoryRateLimiter.make(policy(1, 1_000))
      const long = "k".repeat(60_000)
      yield* limiter.consume(key(long))
      yield* Effect.flip(limiter.consume(key(long)))
      yield* limiter.consume(key(`${"k".repeat(59_999)}j`))
    })
  )

  it.effect("idle subjects are forgotten: at most two windows of subjects are held", () =>
    Effect.gen(function* () {
      const limiter = yield* MemoryRateLimiter.make(policy(1, 1_000))
      for (let round = 0; round < 10; round++) {
        for (let i = 0; i < 10_000; i++) {
          yield* limiter.consume(key(`round-${round}-key-${i}`))
          yield* limiter.consume(address(`round-${round}-address-${i}`))
        }
        expect(yield* limiter.size).toBeLessThanOrEqual(2 * 20_000)
        yield* TestClock.adjust(1_000)
      }
      yield* TestClock.adjust(1_000)
      expect(yield* limiter.size).toBe(0)
      // A subject from long ago starts afresh.
      yield* limiter.consume(key("round-0-key-0"))
    })
  )

  it.effect("a subject exhausted from outside is refused until the window it was given closes, then admitted", () =>
    Effect.gen(function* () {
      const limiter = yield* MemoryRateLimiter.make(policy(3, 60_000))
      expect(yield* limiter.counting).toBe("memory")
      yield* limiter.consume(key("k"))
      yield* limiter.exhaust(key("k"), 20_000)
      yield* limiter.exhaust(address("10.0.0.1"), 90_000)
      expect(yield* Effect.flip(limiter.consume(key("k")))).toMatchObject({ limit: 3, retryAfterMillis: 20_000 })
      // Never longer than a window, whatever it was told.
      expect(yield* Effect.flip(limiter.consume(address("10.0.0.1")))).toMatchObject({ retryAfterMillis: 60_000 })
      yield* limiter.consume(key("other"))
      yield* TestClock.adjust(20_000)
      expect(yield* limiter.consume(key("k"))).toMatchObject({ remaining: 2, resetMillis: 60_000 })
      yield* Effect.flip(limiter.consume(address("10.0.0.1")))
      // Kept no longer than any other subject.
      yield* TestClock.adjust(120_000)
      expect(yield* limiter.size).toBe(0)
    })
  )
})
