/**
 * @since 0.1.0
 */
export * as RateLimiterConformance from "./RateLimiterConformance.js"
/**
 * @since 0.1.0
 */
export * as StorageConformance from "./StorageConformance.js"
