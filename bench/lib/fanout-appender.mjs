// The appender of `bench/webhook-fanout.mjs`, bundled from the TypeScript sources: `count` appends of one
// submission each through `OperatorStore.appendSubmissions` (as the CLI and an embedding service append), one
// after another, round robin over `files`. Prints each submission's number and the time its append committed.
import { OperatorStore } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import { SqliteStorage } from "@filedata/sqlite"
import * as Effect from "effect/Effect"

const { filename, files, count, perSecond } = JSON.parse(process.argv[2])
const began = Date.now()
const program = Effect.gen(function* () {
  const store = yield* OperatorStore.OperatorStore
  for (let n = 0; n < count; n++) {
    const append = yield* Effect.orDie(
      AppendDocument.decode({
        files: [
          {
            id: files[n % files.length],
            submissions: [{ createdDate: new Date().toISOString(), content: { n: `${n}` } }]
          }
        ]
      })
    )
    // At most `perSecond` appends a second, when given: the n-th starts no earlier than n / perSecond s in.
    if (perSecond > 0) yield* Effect.sleep(Math.max(0, began + (n * 1000) / perSecond - Date.now()))
    yield* store.appendSubmissions(append)
    process.stdout.write(`${n} ${Date.now()}\n`)
  }
}).pipe(Effect.provide(SqliteStorage.layer({ filename })), Effect.scoped)
await Effect.runPromise(program)
