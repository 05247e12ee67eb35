// The other process of `bench/wakeups.mjs`, bundled from the TypeScript sources: it opens the storage of
// DATABASE_URL (SQLite for `file:`, else PostgreSQL, as another instance or the CLI would) and, for each line
// `append FILE N` on its standard input, appends one submission `{"n": N}` to FILE through
// `OperatorStore.appendSubmissions`, for each `erase FILE ID` erases that submission through
// `OperatorStore.eraseSubmissions`, then prints `N STARTED RETURNED` (or `ID ...`), the wall-clock times
// (sub-millisecond) the operation was called and returned: an append returns at its commit, an erasure on SQLite
// only after the checkpoint that follows it. Prints `ready` once the storage is open.
import { createInterface } from "node:readline"
import { FileData, OperatorStore, SubmissionId } from "@filedata/core"
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
  const [command, fileId, what] = line.split(" ")
  const started = now()
  const returned = await runtime.runPromise(
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      if (command === "erase") {
        yield* store.eraseSubmissions(FileData.FileId.make(fileId), {
          _tag: "Ids",
          ids: [SubmissionId.SubmissionId.make(what)]
        })
      } else {
        const append = yield* Effect.orDie(
          AppendDocument.decode({
            files: [{ id: fileId, submissions: [{ createdDate: new Date().toISOString(), content: { n: what } }] }]
          })
        )
        yield* store.appendSubmissions(append)
      }
      return now()
    })
  )
  process.stdout.write(`${what} ${started} ${returned}\n`)
}
await runtime.dispose()
