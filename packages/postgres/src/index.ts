/**
 * @since 0.1.0
 */
export * as PgFileRepository from "./PgFileRepository.js"
/**
 * @since 0.1.0
 */
export * as PgMigrations from "./PgMigrations.js"
/**
 * @since 0.1.0
 */
export * as PgOperatorStore from "./PgOperatorStore.js"
/**
 * @since 0.1.0
 */
export * as PgStorage from "./PgStorage.js"
