/**
 * Picks the rate limiter the configuration names.
 *
 * @since 0.1.0
 */
import type { RateLimiter } from "@filedata/core"
import { MemoryRateLimiter } from "@filedata/rate-limiter-memory"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { loadedLayer } from "./internal/loadedLayer.js"
import * as ServiceConfig from "./ServiceConfig.js"

/**
 * The limiter for a configuration: in Redis when `REDIS_URL` is set, so every instance shares the counts,
 * else in this process's memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ServiceConfig.RateLimitingOptions): Layer.Layer<RateLimiter.RateLimiter> =>
  Option.match(options.redisUrl, {
    onNone: () => MemoryRateLimiter.layer(options.policy),
    onSome: (url) =>
      loadedLayer(
        () => import("@filedata/rate-limiter-redis"),
        ({ RedisRateLimiter }) =>
          RedisRateLimiter.layer({ url, policy: options.policy, failureMode: options.failureMode })
      )
  })

/**
 * {@link layer} on the `RATE_LIMIT_*` variables and `REDIS_URL`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<RateLimiter.RateLimiter, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(ServiceConfig.rateLimiting, layer)
)
