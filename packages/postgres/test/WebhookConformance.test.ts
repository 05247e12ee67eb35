import { describe } from "@effect/vitest"
import { WebhookConformance } from "@filedata/conformance"
import { PgStorage } from "@filedata/postgres"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { releaseSchemasAfterAll, reusedSchema, testDatabaseUrl, urlForSchema } from "./utils.js"

releaseSchemasAfterAll()

describe.skipIf(testDatabaseUrl === undefined)("PostgreSQL (TEST_DATABASE_URL)", () => {
  WebhookConformance.suite("PostgreSQL webhook conformance", () =>
    Layer.unwrapScoped(Effect.map(reusedSchema, (schema) => PgStorage.layer({ url: urlForSchema(schema), poolMax: 2 })))
  )
})
