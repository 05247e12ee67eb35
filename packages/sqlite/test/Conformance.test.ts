import { StorageConformance } from "@filedata/conformance"
import { FileRepository } from "@filedata/core"
import { type SqliteFileRepository, SqliteOperatorStore, SqliteStorage } from "@filedata/sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { inspect, tempDatabase } from "./utils.js"

// A writer on a connection of its own, as another process would be. The reader's snapshot is ended after the
// commit, as the storage layer does around its own writes, so the next read sees it at once.
const directWriter = (filename: string) =>
  Layer.effect(
    StorageConformance.DirectWriter,
    Effect.map(FileRepository.FileRepository, (files) => ({
      append: (id, submissions) =>
        inspect(filename, (sql) =>
          sql.withTransaction(
            Effect.gen(function* () {
              yield* SqliteOperatorStore.dialect(sql).writeLock
              for (const row of submissions.map(StorageConformance.toRow)) {
                yield* sql`INSERT INTO submissions (file_id, created_date, content, entry)
                  VALUES (${id}, ${row.createdDate}, ${row.content}, ${row.entry})`
              }
              yield* sql`UPDATE files SET submission_counter = submission_counter + ${submissions.length}
                WHERE id = ${id}`
            })
          )
        ).pipe(
          Effect.orDie,
          Effect.ensuring(Effect.sync(() => (files as SqliteFileRepository.SqliteFileRepository).endSnapshot()))
        )
    }))
  )

// A fresh file per call, removed with the layer's scope.
StorageConformance.suite("SQLite storage conformance", ({ pageSize }) =>
  Layer.unwrapScoped(
    Effect.map(tempDatabase, (filename) =>
      Layer.provideMerge(directWriter(filename), SqliteStorage.layer({ filename, pageSize }))
    )
  )
)
