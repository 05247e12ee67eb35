/**
 * The port that decides whether a caller may make one more request.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { ApiKey } from "./FileData.js"
import type { RateLimited, RateLimiterUnavailable, RateLimitScope } from "./FileDataError.js"

/**
 * Whom a request is counted against.
 *
 * @since 0.1.0
 * @category models
 */
export type RateLimitSubject =
  | { readonly scope: "apiKey"; readonly apiKey: ApiKey }
  | { readonly scope: "clientAddress"; readonly address: string }

/**
 * How many requests fit in one window.
 *
 * @since 0.1.0
 * @category models
 */
export interface Quota {
  readonly limit: number
  readonly windowMillis: number
}

/**
 * The quotas of both scopes. Every adapter enforces the same policy.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimitPolicy {
  readonly apiKey: Quota
  readonly clientAddress: Quota
}

/**
 * Where a subject stands after an admitted request, so replies can tell clients how to pace themselves.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimitState {
  readonly scope: RateLimitScope
  readonly limit: number
  readonly windowMillis: number
  readonly remaining: number
  /** Time until the subject's window closes and its quota is whole again. */
  readonly resetMillis: number
}

/**
 * What checks do while a shared store cannot be reached: `memory` counts them in this process with the same
 * policy; `closed` refuses them with `RateLimiterUnavailable`; `open` admits them uncounted (kept for
 * configurations that chose it; it leaves the service without protection for the outage).
 *
 * @since 0.2.0
 * @category models
 */
export const FailureMode = Schema.Literal("memory", "closed", "open").annotations({
  identifier: "RateLimiterFailureMode"
})

/**
 * @since 0.2.0
 * @category models
 */
export type FailureMode = typeof FailureMode.Type

/**
 * How a limiter counts right now, for health checks and operators: `memory`, in this process by design;
 * `redis`, in the store every instance shares; and while that store cannot be reached, `memory-fallback`
 * (in this process, until it answers again), `refusing` (every request fails with `RateLimiterUnavailable`)
 * or `uncounted` (every request admitted), as the adapter is configured.
 *
 * @since 0.1.0
 * @category models
 */
export const Counting = Schema.Literal("memory", "redis", "memory-fallback", "refusing", "uncounted").annotations({
  identifier: "RateLimiterCounting"
})

/**
 * @since 0.1.0
 * @category models
 */
export type Counting = typeof Counting.Type

/**
 * Counts a request against its subject and fails with `RateLimited` once the subject's quota is used up.
 * A limiter whose store cannot be reached counts in memory meanwhile, admits uncounted, or fails with
 * `RateLimiterUnavailable`, as its adapter is configured; `counting` says which it is doing.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimiter {
  /** The quotas this limiter enforces, for clients told how to pace themselves. */
  readonly policy: RateLimitPolicy
  readonly consume: (subject: RateLimitSubject) => Effect.Effect<RateLimitState, RateLimited | RateLimiterUnavailable>
  /**
   * Optional, for a store that costs a round trip a call: a request's two counts in one step, answering exactly
   * as {@link consumeRequestInTurn} does with `consume`. Without it, the use cases call `consume` twice.
   */
  readonly consumeRequest?: (address: string, apiKey: ApiKey) => Effect.Effect<RequestCount, RateLimiterUnavailable>
  /** How it counts at this moment; a limiter without it is taken to count as it always does. */
  readonly counting?: Effect.Effect<Counting>
}

/**
 * What a request's two counts answered: its client address's, and its key's, which is counted only when the
 * address was within its quota.
 *
 * @since 0.2.0
 * @category models
 */
export interface RequestCount {
  readonly clientAddress: Either.Either<RateLimitState, RateLimited>
  readonly apiKey: Either.Either<RateLimitState, RateLimited> | undefined
}

/**
 * A request's two counts with `consume`, one after the other: the address, then the key only when the address
 * was admitted. The meaning of `RateLimiter.consumeRequest`, and what an adapter falls back to.
 *
 * @since 0.2.0
 * @category combinators
 */
export const consumeRequestInTurn = (
  consume: RateLimiter["consume"],
  address: string,
  apiKey: ApiKey
): Effect.Effect<RequestCount, RateLimiterUnavailable> =>
  Effect.flatMap(
    answer(consume({ scope: "clientAddress", address })),
    (clientAddress): Effect.Effect<RequestCount, RateLimiterUnavailable> =>
      Either.isLeft(clientAddress)
        ? Effect.succeed({ clientAddress, apiKey: undefined })
        : Effect.map(answer(consume({ scope: "apiKey", apiKey })), (key) => ({ clientAddress, apiKey: key }))
  )

// A refusal as an answer; only an unreachable store stays a failure.
const answer = (
  consumed: Effect.Effect<RateLimitState, RateLimited | RateLimiterUnavailable>
): Effect.Effect<Either.Either<RateLimitState, RateLimited>, RateLimiterUnavailable> =>
  Effect.catchIf(
    Effect.map(consumed, (state) => Either.right(state)),
    (failure): failure is RateLimited => failure._tag === "RateLimited",
    (refused) => Effect.succeed(Either.left(refused))
  )

/**
 * @since 0.1.0
 * @category tags
 */
export const RateLimiter: Context.Tag<RateLimiter, RateLimiter> =
  Context.GenericTag<RateLimiter>("@filedata/core/RateLimiter")
