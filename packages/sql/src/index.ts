/**
 * @since 0.3.0
 */
export * as ChangeRows from "./ChangeRows.js"
/**
 * @since 0.2.0
 */
export * as ContentNames from "./ContentNames.js"
/**
 * @since 0.2.0
 */
export * as JoinedText from "./JoinedText.js"
/**
 * @since 0.1.0
 */
export * as KeyHash from "./KeyHash.js"
/**
 * @since 0.2.0
 */
export * as SharedTables from "./SharedTables.js"
/**
 * @since 0.1.0
 */
export * as SqlDialect from "./SqlDialect.js"
/**
 * @since 0.1.0
 */
export * as SqlMigrations from "./SqlMigrations.js"
/**
 * @since 0.1.0
 */
export * as SqlOperatorStore from "./SqlOperatorStore.js"
/**
 * @since 0.2.0
 */
export * as SqlStorage from "./SqlStorage.js"
/**
 * @since 0.2.0
 */
export * as SqlWebhookStore from "./SqlWebhookStore.js"
/**
 * @since 0.1.0
 */
export * as StorageFailure from "./StorageFailure.js"
/**
 * @since 0.1.0
 */
export * as SubmissionPosition from "./SubmissionPosition.js"
