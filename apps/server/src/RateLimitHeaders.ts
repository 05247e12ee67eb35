/**
 * The IETF rate-limit header fields (draft-ietf-httpapi-ratelimit-headers-09) on every reply of the operations
 * on a file: `RateLimit-Policy` (both quotas, fixed) and `RateLimit` (where the caller stands in each quota the
 * request was counted against), taken from what the `RateLimiter` port answered for the request
 * (docs/api.md#rate-limiting).
 *
 * @since 0.1.0
 */

import { type FileDataError, Immediate, type RateLimiter } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"

const policyNames: Record<FileDataError.RateLimitScope, string> = {
  apiKey: '"api-key"',
  clientAddress: '"client-address"'
}

// The fields count in whole seconds; rounding up never tells a client to come back too early.
const seconds = (millis: number): number => Math.max(0, Math.ceil(millis / 1000))

const quotaItem = (scope: FileDataError.RateLimitScope, quota: RateLimiter.Quota): string =>
  `${policyNames[scope]};q=${quota.limit};w=${seconds(quota.windowMillis)}`

/**
 * The `RateLimit-Policy` value of a policy.
 *
 * @since 0.1.0
 * @category formatting
 */
export const policyField = (policy: RateLimiter.RateLimitPolicy): string =>
  `${quotaItem("apiKey", policy.apiKey)}, ${quotaItem("clientAddress", policy.clientAddress)}`

type Failure = FileDataError.RateLimited | FileDataError.RateLimiterUnavailable

interface Standing {
  readonly scope: FileDataError.RateLimitScope
  readonly remaining: number
  readonly resetMillis: number
}

const standingItem = ({ remaining, resetMillis, scope }: Standing): string =>
  `${policyNames[scope]};r=${Math.max(0, remaining)};t=${seconds(resetMillis)}`

/**
 * One request's view of the limiter: run the use case on `limiter`, then read `policy` and `standing` for
 * its reply's fields (`Reply.headers`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Meter {
  readonly limiter: RateLimiter.RateLimiter
  /** The `RateLimit-Policy` value. */
  readonly policy: string
  /** The `RateLimit` value, or `undefined` before the request was counted. */
  readonly standing: () => string | undefined
}

// One request's view of the limiter: what it answered is kept by methods on one object a request, not by
// closures made for each (docs/performance.md#small-per-request-costs).
class MeteredLimiter implements RateLimiter.RateLimiter {
  readonly standings: Array<Standing> = []
  readonly policy: RateLimiter.RateLimitPolicy
  readonly consumeRequest?: NonNullable<RateLimiter.RateLimiter["consumeRequest"]>
  constructor(private readonly inner: RateLimiter.RateLimiter) {
    this.policy = inner.policy
    const { consumeRequest } = inner
    if (consumeRequest !== undefined) {
      this.consumeRequest = (address, apiKey) =>
        Effect.map(consumeRequest(address, apiKey), (count) => {
          this.standOn(count.clientAddress)
          if (count.apiKey !== undefined) this.standOn(count.apiKey)
          return count
        })
    }
  }

  private standOn(answer: Either.Either<RateLimiter.RateLimitState, FileDataError.RateLimited>): void {
    if (Either.isRight(answer)) this.standings.push(answer.right)
    else this.refused(answer.left)
  }

  consume(subject: RateLimiter.RateLimitSubject): Effect.Effect<RateLimiter.RateLimitState, Failure> {
    const consumed = this.inner.consume(subject)
    // An answer already evaluated stays so (`Immediate`); a success is handed on as it came.
    if (Immediate.isDone(consumed)) {
      const exit = consumed
      if (Exit.isSuccess(exit)) {
        this.standings.push(exit.value)
        return exit
      }
      return Exit.mapError(exit, (failure) => this.refused(failure))
    }
    return Effect.mapBoth(consumed, {
      onSuccess: (state) => {
        this.standings.push(state)
        return state
      },
      onFailure: (failure) => this.refused(failure)
    })
  }

  private refused(failure: Failure): Failure {
    if (failure._tag === "RateLimited") {
      this.standings.push({ scope: failure.scope, remaining: 0, resetMillis: failure.retryAfterMillis })
    }
    return failure
  }
}

class RequestMeter implements Meter {
  readonly limiter: MeteredLimiter
  constructor(
    limiter: RateLimiter.RateLimiter,
    readonly policy: string
  ) {
    this.limiter = new MeteredLimiter(limiter)
  }

  standing(): string | undefined {
    const { standings } = this.limiter
    return standings.length === 0 ? undefined : standings.map(standingItem).join(", ")
  }
}

/**
 * Returns a function that makes a fresh {@link Meter} per request over `limiter`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const meters = (limiter: RateLimiter.RateLimiter): (() => Meter) => {
  const policy = policyField(limiter.policy)
  return () => new RequestMeter(limiter, policy)
}
