/**
 * @since 0.1.0
 */
export * as RedisRateLimiter from "./RedisRateLimiter.js"
