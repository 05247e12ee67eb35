// The other process of `bench/wakeups.mjs`, bundled from the TypeScript sources: it opens the storage of
// DATABASE_URL (SQLite for `file:`, else PostgreSQL, as another instance or the CLI would) and, for each line
// `FILE N` on its standard input, appends one submission `{"n": N}` to FILE through
// `OperatorStore.appendSubmissions`, then prints `N MILLIS`, the wall-clock time (sub-millisecond) its commit
// returned. Prints `ready` once the storage is open.
import { createInterface } from "node:readline"
import { OperatorStore } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import { PgStorage } from "@filedata/postgres"
import { SqliteStorage } from "@filedata/sqlite"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"

const url = process.env.DATABASE_URL
const storage = url.startsWith("file:")
  ? SqliteStorage.layer({ filename: url.slice("file:".length) })
  : PgStorage.layer({ url: Redacted.make(url) })
const now = () => performance.timeOrigin + performance.now()

const runtime = ManagedRuntime.make(storage)
await runtime.runPromise(Effect.void)
process.stdout.write("ready\n")
for await (const line of createInterface({ input: process.stdin })) {
  const [fileId, n] = line.split(" ")
  const committed = await runtime.runPromise(
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const append = yield* Effect.orDie(
        AppendDocument.decode({
          files: [{ id: fileId, submissions: [{ createdDate: new Date().toISOString(), content: { n } }] }]
        })
      )
      yield* store.appendSubmissions(append)
      return now()
    })
  )
  process.stdout.write(`${n} ${committed}\n`)
}
await runtime.dispose()
