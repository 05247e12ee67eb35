/**
 * @since 0.2.0
 */
export * as Environment from "./Environment.js"
/**
 * @since 0.1.0
 */
export * as Listener from "./Listener.js"
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
export * as ServiceConfig from "./ServiceConfig.js"
/**
 * @since 0.1.0
 */
export * as StartupFailure from "./StartupFailure.js"
/**
 * @since 0.1.0
 */
export * as Storage from "./Storage.js"
/**
 * @since 0.1.0
 */
export * as Telemetry from "./Telemetry.js"
/**
 * @since 0.2.0
 */
export * as Webhooks from "./Webhooks.js"
