/**
 * @since 0.1.0
 */
export * as MemoryRateLimiter from "./MemoryRateLimiter.js"
