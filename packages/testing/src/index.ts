/**
 * @since 0.1.0
 */
export * as Arbitraries from "./Arbitraries.js"
/**
 * @since 0.1.0
 */
export * as Conditions from "./Conditions.js"
/**
 * @since 0.1.0
 */
export * as Fixtures from "./Fixtures.js"
/**
 * @since 0.1.0
 */
export * as GlobalSetup from "./GlobalSetup.js"
/**
 * @since 0.1.0
 */
export * as Logs from "./Logs.js"
/**
 * @since 0.1.0
 */
export * as ManualClock from "./ManualClock.js"
/**
 * @since 0.1.0
 */
export * as Processes from "./Processes.js"
/**
 * @since 0.1.0
 */
export * as SqliteFiles from "./SqliteFiles.js"
/**
 * @since 0.1.0
 */
export * as TempDirectory from "./TempDirectory.js"
/**
 * @since 0.1.0
 */
export * as TestServices from "./TestServices.js"
