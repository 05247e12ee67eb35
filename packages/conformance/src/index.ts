/**
 * @since 0.1.0
 */
export * as RateLimiterConformance from "./RateLimiterConformance.js"
/**
 * @since 0.1.0
 */
export * as StorageConformance from "./StorageConformance.js"
/**
 * @since 0.2.0
 */
export * as WebhookConformance from "./WebhookConformance.js"
