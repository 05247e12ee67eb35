import { describe } from "@effect/vitest"
import { StorageConformance } from "@filedata/conformance"
import { PgStorage } from "@filedata/postgres"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { releaseSchemasAfterAll, reusedSchema, testDatabaseUrl, urlForSchema } from "./utils.js"

releaseSchemasAfterAll()

describe.skipIf(testDatabaseUrl === undefined)("PostgreSQL (TEST_DATABASE_URL)", () => {
  StorageConformance.suite("PostgreSQL storage conformance", ({ pageSize }) =>
    Layer.unwrapScoped(
      Effect.map(reusedSchema, (schema) => PgStorage.layer({ url: urlForSchema(schema), pageSize, poolMax: 2 }))
    )
  )
  StorageConformance.signalsSuite("PostgreSQL submission signals conformance", ({ pageSize }) =>
    Layer.unwrapScoped(
      Effect.map(reusedSchema, (schema) => PgStorage.layer({ url: urlForSchema(schema), pageSize, poolMax: 2 }))
    )
  )
})
