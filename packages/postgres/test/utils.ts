import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { afterAll } from "@effect/vitest"
import { OperatorStore } from "@filedata/core"
import { FixtureDocument } from "@filedata/fixture"
import { TestServices } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

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
afterAll(() => Effect.runPromise(Effect.forEach(emptied.splice(0), dropSchema, { discard: true })))

// Every table but the migrations' emptied, their sequences restarted, and the read point back at 0, as a
// fresh migration leaves them.
const empty = (schema: string) =>
  admin((sql) =>
    Effect.gen(function* () {
      const tables = yield* sql<{ readonly name: string }>`SELECT tablename AS name FROM pg_tables
        WHERE schemaname = ${schema} AND tablename <> 'effect_sql_migrations'`
      const names = tables.map(({ name }) => `"${schema}"."${name}"`).join(", ")
      yield* sql.unsafe(`TRUNCATE ${names} RESTART IDENTITY CASCADE`)
      yield* sql.unsafe(`INSERT INTO "${schema}".submission_read_point (seq) VALUES (0)`)
    })
  )

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
