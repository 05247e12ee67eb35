/**
 * The rate-limit section of the configuration: the quotas, `REDIS_URL` and the failure mode.
 *
 * @internal
 */
import { RateLimiter } from "@filedata/core"
import * as Config from "effect/Config"
import * as Either from "effect/Either"
import type * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { oneOf, optional, quoted, redactUrl, wholeNumber } from "./configVariables.js"

/** @internal */
export interface RateLimitingOptions {
  readonly policy: RateLimiter.RateLimitPolicy
  /** Set: counted in that Redis, shared by every instance; unset: in this process's memory. */
  readonly redisUrl: Option.Option<Redacted.Redacted<string>>
  /** With Redis: what checks do while it cannot be reached (`RateLimiter.FailureMode`). */
  readonly failureMode: RateLimiter.FailureMode
}

// ioredis would read any other scheme as a host name and start anyway: the limiter would then only warn.
const redisUrl = optional("REDIS_URL", (text) =>
  /^rediss?:\/\//.test(text) && URL.canParse(text)
    ? Either.right(Redacted.make(text))
    : Either.left(`Expected a redis:// or rediss:// URL but received ${quoted(redactUrl(text))}`)
)

/** @internal */
export const rateLimiting: Config.Config<RateLimitingOptions> = Config.all({
  apiKeyLimit: wholeNumber("RATE_LIMIT_MAX", 60, 1, Number.MAX_SAFE_INTEGER),
  clientAddressLimit: wholeNumber("RATE_LIMIT_IP_MAX", 600, 1, Number.MAX_SAFE_INTEGER),
  windowMillis: wholeNumber("RATE_LIMIT_WINDOW_MS", 60_000, 1, 2_147_483_647),
  redisUrl,
  failureMode: oneOf("RATE_LIMIT_FAILURE_MODE", RateLimiter.FailureMode.literals).pipe(Config.withDefault("memory"))
}).pipe(
  Config.map(({ apiKeyLimit, clientAddressLimit, failureMode, redisUrl, windowMillis }) => ({
    policy: {
      apiKey: { limit: apiKeyLimit, windowMillis },
      clientAddress: { limit: clientAddressLimit, windowMillis }
    },
    redisUrl,
    failureMode
  }))
)
