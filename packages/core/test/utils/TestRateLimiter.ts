/**
 * A counting `RateLimiter`: every subject gets `limit` requests, then `RateLimited`. No window: a test
 * that needs a fresh quota makes a fresh limiter. A limit of 0 refuses every request of that scope.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { ApiKey } from "../../src/shared/FileData.js"
import { RateLimited, type RateLimitScope } from "../../src/shared/FileDataError.js"
import * as RateLimiter from "../../src/shared/RateLimiter.js"
import type { Journal } from "./Journal.js"

export interface TestRateLimiterOptions {
  readonly limits?: Partial<Record<RateLimitScope, number>>
  readonly retryAfterMillis?: number
  /** With `consumeRequest`, journalled as `"consumeRequest <address> <key>"`, as a store with one round trip. */
  readonly inOneStep?: boolean
}

export interface TestRateLimiter {
  readonly limiter: RateLimiter.RateLimiter
  readonly layer: Layer.Layer<RateLimiter.RateLimiter>
  /** Requests counted so far for `"<scope> <subject>"`, e.g. `"apiKey k-1"`. */
  readonly count: (subject: string) => number
}

const subjectOf = (subject: RateLimiter.RateLimitSubject): string =>
  subject.scope === "apiKey" ? `apiKey ${Redacted.value(subject.apiKey)}` : `clientAddress ${subject.address}`

/**
 * Every call is written to `journal` as `"consume <scope> <subject>"` (or `"consumeRequest …"`).
 */
export const make = (options: TestRateLimiterOptions = {}, journal: Journal = []): TestRateLimiter => {
  const counts = new Map<string, number>()
  const quota = (scope: RateLimitScope): RateLimiter.Quota => ({
    limit: options.limits?.[scope] ?? Number.MAX_SAFE_INTEGER,
    windowMillis: 60_000
  })
  const count = (subject: RateLimiter.RateLimitSubject) =>
    Effect.suspend(() => {
      const key = subjectOf(subject)
      const counted = (counts.get(key) ?? 0) + 1
      counts.set(key, counted)
      const limit = options.limits?.[subject.scope] ?? Number.POSITIVE_INFINITY
      return counted > limit
        ? Effect.fail(
            new RateLimited({ scope: subject.scope, limit, retryAfterMillis: options.retryAfterMillis ?? 1_000 })
          )
        : Effect.succeed({
            scope: subject.scope,
            limit,
            windowMillis: 60_000,
            remaining: Math.max(0, limit - counted),
            resetMillis: 60_000
          })
    })
  const limiter: RateLimiter.RateLimiter = {
    policy: { apiKey: quota("apiKey"), clientAddress: quota("clientAddress") },
    consume: (subject) =>
      Effect.suspend(() => {
        journal.push(`consume ${subjectOf(subject)}`)
        return count(subject)
      }),
    ...(options.inOneStep === true
      ? {
          consumeRequest: (address: string, apiKey: ApiKey) =>
            Effect.suspend(() => {
              journal.push(`consumeRequest ${address} ${Redacted.value(apiKey)}`)
              return RateLimiter.consumeRequestInTurn(count, address, apiKey)
            })
        }
      : {})
  }
  return {
    limiter,
    layer: Layer.succeed(RateLimiter.RateLimiter, limiter),
    count: (subject) => counts.get(subject) ?? 0
  }
}
