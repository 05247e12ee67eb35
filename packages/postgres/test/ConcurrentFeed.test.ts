import { describe } from "@effect/vitest"
import { StorageConformance } from "@filedata/conformance"
import { FileRepository, OperatorStore } from "@filedata/core"
import { PgStorage } from "@filedata/postgres"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { tempSchema, testDatabaseUrl, urlForSchema } from "./utils.js"

// Instances of the adapter on one schema, each with a pool of its own, as servers sharing one database.
describe.skipIf(testDatabaseUrl === undefined)("PostgreSQL (TEST_DATABASE_URL)", () => {
  StorageConformance.concurrentFeedSuite("PostgreSQL change feed under concurrent writers", (count) =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      return yield* Effect.forEach(Array.from({ length: count }), () =>
        Effect.map(Layer.build(PgStorage.layer({ url: urlForSchema(schema), poolMax: 4 })), (context) =>
          Context.make(FileRepository.FileRepository, Context.get(context, FileRepository.FileRepository)).pipe(
            Context.add(OperatorStore.OperatorStore, Context.get(context, OperatorStore.OperatorStore))
          )
        )
      )
    })
  )
})
