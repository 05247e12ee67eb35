/**
 * @since 0.1.0
 */
export * as FiledataConfig from "./FiledataConfig.js"
/**
 * @since 0.1.0
 */
export * as Logging from "./Logging.js"
/**
 * @since 0.1.0
 */
export * as RateLimiting from "./RateLimiting.js"
/**
 * @since 0.1.0
 */
export * as Storage from "./Storage.js"
