/**
 * Picks the rate limiter the configuration names.
 *
 * @since 0.1.0
 */
import type { RateLimiter } from "@filedata/core"
import { MemoryRateLimiter } from "@filedata/rate-limiter-memory"
import type * as Layer from "effect/Layer"
import type { FiledataConfig } from "./FiledataConfig.js"

/**
 * The limiter for a configuration: in this process's memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: FiledataConfig): Layer.Layer<RateLimiter.RateLimiter> =>
  MemoryRateLimiter.layer(config.rateLimit)
