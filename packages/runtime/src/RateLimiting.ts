/**
 * Picks the rate limiter the configuration names.
 *
 * @since 0.1.0
 */
import type { RateLimiter } from "@filedata/core"
import { MemoryRateLimiter } from "@filedata/rate-limiter-memory"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { loadedLayer } from "./internal/loadedLayer.js"
import type { ServiceConfig } from "./ServiceConfig.js"

/**
 * The limiter for a configuration: in Redis when `REDIS_URL` is set, so every instance shares the counts,
 * else in this process's memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: ServiceConfig): Layer.Layer<RateLimiter.RateLimiter> =>
  Option.match(config.redisUrl, {
    onNone: () => MemoryRateLimiter.layer(config.rateLimit),
    onSome: (url) =>
      loadedLayer(
        () => import("@filedata/rate-limiter-redis"),
        ({ RedisRateLimiter }) =>
          RedisRateLimiter.layer({ url, policy: config.rateLimit, failureMode: config.rateLimitFailureMode })
      )
  })
