/**
 * The PostgreSQL and Redis the tests may use, named by `TEST_DATABASE_URL` and `TEST_REDIS_URL`; unset, the
 * suites that need them are skipped and say why.
 *
 * @since 0.1.0
 */

/**
 * The PostgreSQL server for tests, if any.
 *
 * @since 0.1.0
 * @category services
 */
export const databaseUrl: string | undefined = process.env.TEST_DATABASE_URL || undefined

/**
 * The Redis server for tests, if any.
 *
 * @since 0.1.0
 * @category services
 */
export const redisUrl: string | undefined = process.env.TEST_REDIS_URL || undefined

/**
 * Why a suite that needs PostgreSQL is skipped.
 *
 * @since 0.1.0
 * @category services
 */
export const databaseUnset =
  "TEST_DATABASE_URL is unset (e.g. TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test)"

/**
 * Why a suite that needs Redis is skipped.
 *
 * @since 0.1.0
 * @category services
 */
export const redisUnset = "TEST_REDIS_URL is unset (e.g. TEST_REDIS_URL=redis://127.0.0.1:6379)"
