import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { afterAll } from "@effect/vitest"
import { OperatorStore } from "@filedata/core"
import { FixtureDocument } from "@filedata/fixture"
import { TestServices } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Pg from "pg"

/** The server the tests use; unset means the PostgreSQL tests are skipped. */
export const testDatabaseUrl = TestServices.databaseUrl

if (testDatabaseUrl === undefined) console.warn(`PostgreSQL tests skipped: ${TestServices.databaseUnset}`)

// The tests' commits do not wait for the WAL to reach the disk: no test outlives a crash of the server, and a
// schema's creation, migration and drop took about a third less time (the conformance suite makes one per test).
const startOptions = (schema?: string) =>
  ["-c synchronous_commit=off", ...(schema === undefined ? [] : [`-c search_path=${schema}`])].join(" ")

const testUrl = (schema?: string): Redacted.Redacted<string> => {
  const url = new URL(testDatabaseUrl ?? "")
  url.searchParams.set("options", startOptions(schema))
  return Redacted.make(url.toString())
}

/** Runs statements on a client of its own against the test database, outside the adapter. */
export const admin = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(
    Effect.provide(PgClient.layer({ url: testUrl(), maxConnections: 1 })),
    Effect.orDie
  )

/** The test URL with its connections confined to one schema. */
export const urlForSchema = (schema: string): Redacted.Redacted<string> => testUrl(schema)

const createSchema = Effect.gen(function* () {
  const schema = `filedata_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`
  yield* admin((sql) => sql`CREATE SCHEMA ${sql(schema)}`)
  return schema
})

const dropSchema = (schema: string) => admin((sql) => sql`DROP SCHEMA ${sql(schema)} CASCADE`)

/**
 * A fresh, empty schema, dropped with everything in it when the scope closes. A schema is far cheaper than
 * a database, and a search_path set at connection start confines the adapter to it.
 */
export const tempSchema = Effect.acquireRelease(createSchema, dropSchema)

// Migrated schemas that tests of this file gave back emptied, for the next: creating, migrating and dropping a
// schema for each of the conformance suites' stores (about 150) was most of their time.
const emptied: Array<string> = []

// One connection for emptying, kept for the file's tests: a connection of its own per test cost a backend's start.
let emptier: Pg.Pool | undefined

/**
 * Registers, in the calling test file, the drop of the schemas {@link reusedSchema} kept and the close of its
 * connection. Called by each file: the files of a worker share this module, so a hook registered here, as it
 * loads, would belong to the first file only.
 */
export const releaseSchemasAfterAll = () =>
  afterAll(async () => {
    const pool = emptier
    emptier = undefined
    await pool?.end()
    await Effect.runPromise(Effect.forEach(emptied.splice(0), dropSchema, { discard: true }))
  })

// Every table but the migrations' emptied, their sequences restarted, and the read point back at 0, as a
// fresh migration leaves them. DELETE with the foreign keys' triggers off (replica role): TRUNCATE of ten tables
// took about 18 ms, these few rows well under one.
const empty = (schema: string) =>
  Effect.promise(async () => {
    emptier ??= new Pg.Pool({ connectionString: Redacted.value(testUrl()), max: 1 }).on("error", () => {})
    const client = await emptier.connect()
    try {
      const { rows } = await client.query<{ name: string; kind: string }>(
        `SELECT c.relname AS name, c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relkind IN ('r', 'S') AND c.relname <> 'effect_sql_migrations'`,
        [schema]
      )
      const at = (name: string) => `"${schema}"."${name}"`
      await client.query(
        [
          "BEGIN",
          "SET LOCAL session_replication_role = replica",
          ...rows.filter((row) => row.kind === "r").map((row) => `DELETE FROM ${at(row.name)}`),
          ...rows.filter((row) => row.kind === "S").map((row) => `ALTER SEQUENCE ${at(row.name)} RESTART`),
          `INSERT INTO ${at("submission_read_point")} (seq) VALUES (0)`,
          "COMMIT"
        ].join(";\n")
      )
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {})
      throw error
    } finally {
      client.release()
    }
  })

/**
 * An empty schema for a store used only through its ports (the conformance suites): one an earlier test of the
 * file gave back, emptied, which the adapter finds migrated; or a fresh one. Emptied when the scope closes and
 * kept for the next test, or dropped when it cannot be emptied.
 */
export const reusedSchema = Effect.acquireRelease(
  Effect.suspend(() => {
    const schema = emptied.pop()
    return schema === undefined ? createSchema : Effect.succeed(schema)
  }),
  (schema) =>
    Effect.matchCauseEffect(empty(schema), {
      onFailure: () => dropSchema(schema),
      onSuccess: () => Effect.sync(() => emptied.push(schema))
    })
)

/** Imports a fixture document through the adapter's operator store. */
export const importDocument = (document: unknown) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    return yield* store.importFixture(yield* Effect.orDie(FixtureDocument.decode(document)))
  })
