import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe } from "@effect/vitest"
import { StorageConformance } from "@filedata/conformance"
import { PgOperatorStore, PgStorage } from "@filedata/postgres"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { tempSchema, testDatabaseUrl, urlForSchema } from "./utils.js"

// A writer on a client of its own, as another instance would be, taking the writers' lock first.
const directWriter = (schema: string) =>
  Layer.succeed(StorageConformance.DirectWriter, {
    append: (id, submissions) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(
          Effect.gen(function* () {
            const dialect = PgOperatorStore.dialect(sql)
            yield* dialect.writeLock
            for (const row of submissions.map(StorageConformance.toRow)) {
              yield* sql`INSERT INTO submissions (file_id, created_date, content, entry)
                VALUES (${id}, ${dialect.instant(row.createdDate)}, ${row.content}, ${row.entry})`
            }
            yield* sql`UPDATE files SET submission_counter = submission_counter + ${submissions.length}
              WHERE id = ${id}`
          })
        )
      ).pipe(Effect.provide(PgClient.layer({ url: urlForSchema(schema), maxConnections: 1 })), Effect.orDie)
  })

describe.skipIf(testDatabaseUrl === undefined)("PostgreSQL (TEST_DATABASE_URL)", () => {
  StorageConformance.suite("PostgreSQL storage conformance", ({ pageSize }) =>
    Layer.unwrapScoped(
      Effect.map(tempSchema, (schema) =>
        Layer.merge(PgStorage.layer({ url: urlForSchema(schema), pageSize, poolMax: 2 }), directWriter(schema))
      )
    )
  )
})
