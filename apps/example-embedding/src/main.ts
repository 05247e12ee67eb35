/**
 * filedata inside another program, from its packages alone: the file-data operation run in process on a
 * SQLite database with the in-memory rate limiter, then the same file asked of a running filedata server
 * through the typed client, whole and page by page, with refusals as typed failures. docs/embedding.md explains each part.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { FileDataClient, type SubmissionsReply } from "@filedata/client"
import { FileDataReply, GetFileData, OperatorStore } from "@filedata/core"
import { FixtureDocument } from "@filedata/fixture"
import { MemoryRateLimiter } from "@filedata/rate-limiter-memory"
import { SqliteStorage } from "@filedata/sqlite"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

// A file of fixture.json, its owner's key, and another user's key, which may not read it.
const fileId = "example-contact-form"
const apiKey = "example-key-not-for-production"
const otherUsersKey = "other-key-not-for-production"

const temporaryDirectory = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "filedata-example-"))),
  (directory) => Effect.sync(() => rmSync(directory, { recursive: true, force: true }))
)

// The ports the operation runs on: storage and a rate limiter; here the packaged SQLite and memory adapters.
const ports = (directory: string) =>
  Layer.merge(
    SqliteStorage.layer({ filename: join(directory, "filedata.db") }),
    MemoryRateLimiter.layer({
      apiKey: { limit: 60, windowMillis: 60_000 },
      clientAddress: { limit: 600, windowMillis: 60_000 }
    })
  )

const inProcess = Effect.gen(function* () {
  const store = yield* OperatorStore.OperatorStore
  const document: unknown = JSON.parse(readFileSync(new URL("../fixture.json", import.meta.url), "utf8"))
  yield* store.importFixture(yield* FixtureDocument.decode(document))

  const body = Effect.succeed({ fileId, apiKey })
  const reply = yield* GetFileData.run({ clientAddress: "127.0.0.1", body })
  const file = yield* FileDataReply.toFileData(reply)
  yield* Console.log(`in process: ${JSON.stringify(file)}`)
})

const overHttp = Effect.gen(function* () {
  const client = yield* FileDataClient.FileDataClient
  const file = yield* client.files.getFileData({ payload: { fileId, apiKey } })
  yield* Console.log(`over HTTP: ${JSON.stringify(file)}`)

  // A refusal is a typed failure: here the only one expected, so any other stays a failure of the program.
  const denied = yield* client.files
    .getFileData({ payload: { fileId, apiKey: otherUsersKey } })
    .pipe(
      Effect.zipRight(Effect.dieMessage("another user's key read the file")),
      Effect.catchTag("AccessDenied", Effect.succeed)
    )
  yield* Console.log(`refused: ${denied._tag} (${denied.status} ${denied.code}): ${denied.detail}`)

  // The incremental read, one submission a page: `next` goes back as `after` until nothing more matched.
  const submissions: Array<SubmissionsReply.IdentifiedSubmission> = []
  let after: string | undefined
  for (let hasMore = true; hasMore; ) {
    const page = yield* client.files.getSubmissions({
      payload: after === undefined ? { fileId, apiKey, limit: 1 } : { fileId, apiKey, limit: 1, after }
    })
    submissions.push(...page.submissions)
    after = page.next
    hasMore = page.hasMore
  }
  yield* Console.log(`page by page: ${JSON.stringify(submissions)}`)

  // The change feed from the start: every submission stored, in commit order, under the same ids.
  const feed = yield* client.files.getChanges({ payload: { fileId, apiKey } })
  yield* Console.log(`feed: ${JSON.stringify(feed.changes.map((change) => [change.type, change.id]))}`)

  // A body the server would refuse is refused before it is sent, with the failure the server would send.
  const invalid = yield* client.files
    .getSubmissions({ payload: { fileId, apiKey, limit: 0 } })
    .pipe(
      Effect.zipRight(Effect.dieMessage("limit 0 was accepted")),
      Effect.catchTag("ValidationFailed", Effect.succeed)
    )
  yield* Console.log(`invalid: ${invalid._tag} ${invalid.errors.map((issue) => issue.pointer).join(", ")}`)
})

const program = Effect.gen(function* () {
  const directory = yield* temporaryDirectory
  yield* inProcess.pipe(Effect.provide(ports(directory)))

  const serverUrl = yield* Config.option(Config.nonEmptyString("FILEDATA_URL"))
  if (Option.isNone(serverUrl)) {
    return yield* Console.log("FILEDATA_URL is not set: no server to call (see README.md)")
  }
  yield* overHttp.pipe(Effect.provide(FileDataClient.layer({ baseUrl: serverUrl.value })))
}).pipe(Effect.scoped)

const exit = await Effect.runPromiseExit(program)
if (Exit.isFailure(exit)) {
  console.error(Cause.pretty(exit.cause))
  process.exitCode = 1
}
