/**
 * The requests of one process that wait for submissions (`GetSubmissions` with `wait`): how many one API key
 * and one client address may hold at once, and the stop that answers all of them at once when the process
 * shuts down. Bounds are per process, like the connections they hold.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type { ApiKey } from "../shared/FileData.js"
import { RateLimited } from "../shared/FileDataError.js"
import * as Immediate from "../shared/Immediate.js"
import type * as SubmissionSignals from "./SubmissionSignals.js"

/**
 * How many requests may wait at once: per API key, and per client address whatever the key.
 *
 * @since 0.2.0
 * @category models
 */
export interface Limits {
  readonly perKey: number
  readonly perAddress: number
}

/**
 * The defaults of `LONG_POLL_MAX_PER_KEY` and `LONG_POLL_MAX_PER_ADDRESS`.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultLimits: Limits = { perKey: 20, perAddress: 100 }

/**
 * A refused request may come back after this long: by then most waits of its key or address have ended or
 * answered.
 *
 * @since 0.2.0
 * @category constants
 */
export const retryAfterMillis = 1000

/**
 * @since 0.2.0
 * @category models
 */
export interface WaitingRequests {
  readonly limits: Limits
  /**
   * Counts a request that is about to wait against its key and its address until the function it gives is
   * called; fails with `RateLimited` (scope `apiKey` or `clientAddress`) when either holds its limit already.
   * `end` ends when the process stops (at once, when it has stopped already): the wait ends with what it has.
   * Answered at once, so a request served in process takes no step of the runtime for it.
   */
  readonly hold: (
    apiKey: ApiKey,
    clientAddress: string,
    end: SubmissionSignals.WaitEnd
  ) => Immediate.Immediate<() => void, RateLimited>
  /** Ends every wait, and every wait to come, at once. */
  readonly stop: Effect.Effect<void>
  /** How many requests wait now. */
  readonly size: () => number
}

/**
 * @since 0.2.0
 * @category tags
 */
export const WaitingRequests: Context.Tag<WaitingRequests, WaitingRequests> = Context.GenericTag<WaitingRequests>(
  "@filedata/core/WaitingRequests"
)

const increment = (counts: Map<string, number>, key: string, by: number) => {
  const next = (counts.get(key) ?? 0) + by
  if (next === 0) counts.delete(key)
  else counts.set(key, next)
}

/**
 * A fresh registry with `limits`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (limits: Limits = defaultLimits): Effect.Effect<WaitingRequests> =>
  Effect.sync(() => {
    const byKey = new Map<string, number>()
    const byAddress = new Map<string, number>()
    const ends = new Set<SubmissionSignals.WaitEnd>()
    let stopped = false
    let size = 0
    return {
      limits,
      hold: (apiKey, clientAddress, end) => {
        const key = Redacted.value(apiKey)
        if ((byKey.get(key) ?? 0) >= limits.perKey) {
          return Immediate.fail(new RateLimited({ scope: "apiKey", limit: limits.perKey, retryAfterMillis }))
        }
        if ((byAddress.get(clientAddress) ?? 0) >= limits.perAddress) {
          return Immediate.fail(new RateLimited({ scope: "clientAddress", limit: limits.perAddress, retryAfterMillis }))
        }
        increment(byKey, key, 1)
        increment(byAddress, clientAddress, 1)
        size++
        if (stopped) end.end()
        else ends.add(end)
        let held = true
        return Immediate.succeed(() => {
          if (!held) return
          held = false
          increment(byKey, key, -1)
          increment(byAddress, clientAddress, -1)
          ends.delete(end)
          size--
        })
      },
      stop: Effect.sync(() => {
        stopped = true
        for (const end of ends) end.end()
        ends.clear()
      }),
      size: () => size
    }
  })
