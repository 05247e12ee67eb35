import { StorageConformance } from "@filedata/conformance"
import { FileRepository, OperatorStore } from "@filedata/core"
import { SqliteStorage } from "@filedata/sqlite"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { tempDatabase } from "./utils.js"

// Instances of the adapter on one file, each with its write and read connections, as processes sharing it.
StorageConformance.concurrentFeedSuite("SQLite change feed under concurrent writers", (count) =>
  Effect.gen(function* () {
    const filename = yield* tempDatabase
    return yield* Effect.forEach(Array.from({ length: count }), () =>
      Effect.map(Layer.build(SqliteStorage.layer({ filename })), (context) =>
        Context.make(FileRepository.FileRepository, Context.get(context, FileRepository.FileRepository)).pipe(
          Context.add(OperatorStore.OperatorStore, Context.get(context, OperatorStore.OperatorStore))
        )
      )
    )
  })
)
