/**
 * An in-process `RateLimiter`: a fixed window per subject that opens with the subject's first request (so a
 * burst cannot straddle a clock-aligned boundary), its counters in two generations that rotate every window,
 * so at most the subjects of the last two windows are held and nothing sweeps. What that costs:
 * docs/operations.md#memory-of-the-in-memory-rate-limiter.
 *
 * @since 0.1.0
 */

import { createHash } from "node:crypto"
import { FileDataError, Immediate, RateLimiter } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

interface Window {
  readonly start: number
  count: number
}

const LONGEST_KEPT_KEY = 64

const makeCounter = (scope: FileDataError.RateLimitScope, { limit, windowMillis }: RateLimiter.Quota) => {
  let generationStart = Number.NEGATIVE_INFINITY
  let current = new Map<string, Window>()
  let previous = new Map<string, Window>()

  const rotate = (now: number) => {
    if (now - generationStart >= windowMillis) {
      previous = now - generationStart >= 2 * windowMillis ? new Map() : current
      current = new Map()
      generationStart = now
    }
  }

  const state = (window: Window, now: number): RateLimiter.RateLimitState => ({
    scope,
    limit,
    windowMillis,
    remaining: limit - window.count,
    resetMillis: window.start + windowMillis - now
  })

  const consume = (
    key: string,
    now: number
  ): Immediate.Immediate<RateLimiter.RateLimitState, FileDataError.RateLimited> => {
    rotate(now)
    let window = current.get(key) ?? previous.get(key)
    if (window === undefined || now - window.start >= windowMillis) {
      window = { start: now, count: 1 }
      current.set(key, window)
      return Immediate.succeed(state(window, now))
    }
    if (window.count >= limit) {
      return Immediate.fail(
        new FileDataError.RateLimited({ scope, limit, retryAfterMillis: window.start + windowMillis - now })
      )
    }
    window.count++
    return Immediate.succeed(state(window, now))
  }

  // The window is put where a fresh one would go, so the generations still drop it after two rotations,
  // by which time it has closed: `retryAfterMillis` is at most a window.
  const exhaust = (key: string, now: number, retryAfterMillis: number): void => {
    rotate(now)
    current.set(key, { start: now + Math.min(retryAfterMillis, windowMillis) - windowMillis, count: limit })
  }

  const size = (now: number): number => {
    rotate(now)
    return current.size + previous.size
  }

  return { consume, exhaust, size }
}

const keyOf = (subject: RateLimiter.RateLimitSubject): string => {
  const text = subject.scope === "apiKey" ? Redacted.value(subject.apiKey) : subject.address
  return text.length <= LONGEST_KEPT_KEY ? text : createHash("sha256").update(text).digest("base64")
}

/**
 * The port, plus how many subjects it currently holds (a gauge for operators, and the memory bound's proof),
 * and a way to take over a refusal decided elsewhere.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryRateLimiter extends RateLimiter.RateLimiter {
  /**
   * Memory never fails to answer, so only `RateLimited` is possible; counted when called and answered at once, so
   * a request needs no fiber for it (`Immediate`).
   */
  readonly consume: (
    subject: RateLimiter.RateLimitSubject
  ) => Immediate.Immediate<RateLimiter.RateLimitState, FileDataError.RateLimited>
  readonly size: Effect.Effect<number>
  readonly counting: Effect.Effect<RateLimiter.Counting>
  /**
   * Marks the subject as over its quota until its window closes in `retryAfterMillis` (at most a window),
   * as a shared store refused it, so counting here goes on from that when the store is out of reach.
   */
  readonly exhaust: (subject: RateLimiter.RateLimitSubject, retryAfterMillis: number) => Effect.Effect<void>
}

/**
 * Builds a limiter enforcing `policy`; its state lives as long as the returned service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (policy: RateLimiter.RateLimitPolicy): Effect.Effect<MemoryRateLimiter> =>
  // The clock is taken once, with the limiter: looking it up on every request costs more than the counting.
  Effect.map(Effect.clock, (clock) => {
    const counters = {
      apiKey: makeCounter("apiKey", policy.apiKey),
      clientAddress: makeCounter("clientAddress", policy.clientAddress)
    }
    return {
      policy,
      consume: (subject) => counters[subject.scope].consume(keyOf(subject), clock.unsafeCurrentTimeMillis()),
      counting: Effect.succeed("memory"),
      exhaust: (subject, retryAfterMillis) =>
        Effect.sync(() =>
          counters[subject.scope].exhaust(keyOf(subject), clock.unsafeCurrentTimeMillis(), retryAfterMillis)
        ),
      size: Effect.sync(() => {
        const now = clock.unsafeCurrentTimeMillis()
        return counters.apiKey.size(now) + counters.clientAddress.size(now)
      })
    }
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (policy: RateLimiter.RateLimitPolicy): Layer.Layer<RateLimiter.RateLimiter> =>
  Layer.effect(RateLimiter.RateLimiter, make(policy))
