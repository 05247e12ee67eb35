/**
 * The PostgreSQL and Redis the tests may use, named by `TEST_DATABASE_URL` and `TEST_REDIS_URL`; unset, the
 * suites that need them are skipped and say why.
 *
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"
import { createRequire } from "node:module"
import { join } from "node:path"
import { root } from "./Processes.js"

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

/**
 * Runs one statement on a connection of its own to `connectionString`, with the `pg` driver the PostgreSQL
 * adapter uses (reached through that package: the test packages do not depend on it).
 *
 * @since 0.2.0
 * @category services
 */
export const runStatement = async (connectionString: string, statement: string): Promise<void> => {
  const fromPostgres = createRequire(join(root, "packages/postgres/package.json"))
  const fromSqlPg = createRequire(fromPostgres.resolve("@effect/sql-pg/package.json"))
  const pg = fromSqlPg("pg") as {
    Client: new (options: {
      connectionString: string
    }) => {
      connect(): Promise<void>
      query(text: string): Promise<unknown>
      end(): Promise<void>
    }
  }
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/**
 * A database of its own on the server `TEST_DATABASE_URL` names, created now, with its URL and a `drop` that
 * ends its connections and removes it.
 *
 * @since 0.2.0
 * @category services
 */
export const temporaryDatabase = async (
  prefix: string
): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  if (databaseUrl === undefined) throw new Error(databaseUnset)
  const server = databaseUrl
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  await runStatement(server, `CREATE DATABASE ${name}`)
  const url = new URL(server)
  url.pathname = `/${name}`
  // WITH (FORCE) ends connections a failed test may have left open (PostgreSQL 13 and later).
  return { url: url.toString(), drop: () => runStatement(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}
