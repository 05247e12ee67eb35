/**
 * @since 0.1.0
 */
export * as SqliteFileRepository from "./SqliteFileRepository.js"
/**
 * @since 0.1.0
 */
export * as SqliteMigrations from "./SqliteMigrations.js"
/**
 * @since 0.1.0
 */
export * as SqliteOperatorStore from "./SqliteOperatorStore.js"
/**
 * @since 0.1.0
 */
export * as SqliteStorage from "./SqliteStorage.js"
