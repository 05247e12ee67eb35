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
import * as Redacted from "effect/Redacted"
import { loadedLayer } from "./internal/loadedLayer.js"
import * as ServiceConfig from "./ServiceConfig.js"
import { DependencyUnavailable } from "./StartupFailure.js"

/**
 * The limiter for a configuration: in Redis when `REDIS_URL` is set, so every instance shares the counts,
 * else in this process's memory. Redis must answer while the layer is built; it fails with the address and
 * the driver's reason when it does not (an outage after that follows the failure mode).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: ServiceConfig.RateLimitingOptions
): Layer.Layer<RateLimiter.RateLimiter, DependencyUnavailable> =>
  Option.match(options.redisUrl, {
    onNone: () => MemoryRateLimiter.layer(options.policy),
    onSome: (url) =>
      loadedLayer(
        () => import("@filedata/rate-limiter-redis"),
        ({ RedisRateLimiter }) =>
          RedisRateLimiter.layer({ url, policy: options.policy, failureMode: options.failureMode })
      ).pipe(
        Layer.mapError(
          (cause) =>
            new DependencyUnavailable({
              dependency: "Redis",
              variable: "REDIS_URL",
              address: ServiceConfig.redactUrl(Redacted.value(url)),
              cause
            })
        )
      )
  })

/**
 * {@link layer} on the `RATE_LIMIT_*` variables and `REDIS_URL`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<RateLimiter.RateLimiter, DependencyUnavailable | ConfigError.ConfigError> =
  Layer.unwrapEffect(Effect.map(ServiceConfig.rateLimiting, layer))
