/**
 * The SQLite adapter as one layer: opens the database, migrates it and provides both storage ports.
 *
 * @since 0.1.0
 */

import { randomUUID } from "node:crypto"
import { mkdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { FileRepository, OperatorStore, SubmissionSignals, WebhookStore } from "@filedata/core"
import { type SqlStorage, SqlWebhookStore, StorageFailure } from "@filedata/sql"
import Database from "better-sqlite3"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as CommitProbe from "./internal/commitProbe.js"
import * as WriteLock from "./internal/writeLock.js"
import * as SqliteFileRepository from "./SqliteFileRepository.js"
import * as SqliteMigrations from "./SqliteMigrations.js"
import * as SqliteOperatorStore from "./SqliteOperatorStore.js"

/**
 * Where the database lives and how it is read.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteStorageOptions {
  /** A file path, created with its parent directory if missing, or `":memory:"`. */
  readonly filename: string
  /** Submissions read per page; defaults to {@link SqliteFileRepository.defaultPageSize}. */
  readonly pageSize?: number | undefined
  /**
   * The longest the files of waiting requests go without a look, for commits by other processes that the WAL's
   * watch and the probe missed; defaults to `SubmissionSignals.defaultIntervalMillis`. The probe looks every
   * `SubmissionSignals.defaultProbeMillis` while requests wait.
   */
  readonly signalIntervalMillis?: number | undefined
}

const MEMORY = ":memory:"

// The reader has a connection of its own, and two connections cannot share a `:memory:` database (this
// SQLite build reads `file:` URIs as plain names). So "in memory" is a private temporary file, deleted with
// the layer: the same lifetime and isolation, visible to both connections.
const temporaryDatabase = Effect.acquireRelease(
  Effect.sync(() => join(tmpdir(), `filedata-memory-${randomUUID()}.db`)),
  (filename) =>
    Effect.sync(() => {
      for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${filename}${suffix}`, { force: true })
    })
)

// The database in WAL, so the reader never waits for the importer. Switching takes the file's exclusive lock, and
// of two processes opening a new file at once SQLite refuses one at once ("database is locked") rather than make
// it wait: the switch is made here first, on a connection that never waits with the thread, again on the
// writers' timer while refused; the client does not switch again.
const walMode = (filename: string) =>
  Effect.retry(
    Effect.try({
      try: () => {
        const db = new Database(filename, { timeout: 0 })
        try {
          db.pragma("journal_mode = WAL")
        } finally {
          db.close()
        }
      },
      catch: (cause) => cause
    }),
    { schedule: WriteLock.busyWait, while: WriteLock.isBusyError }
  )

const client = (filename: string) =>
  Layer.unwrapEffect(
    Effect.as(
      Effect.zipRight(
        Effect.try({
          try: () => {
            mkdirSync(dirname(filename), { recursive: true })
          },
          // The OS's reason ("ENOTDIR: not a directory, mkdir '...'") names the part of the path that failed.
          catch: (cause) =>
            new Error(
              `cannot create the directory ${dirname(filename)}: ${cause instanceof Error ? cause.message : String(cause)}`,
              { cause }
            )
        }),
        walMode(filename)
      ),
      SqliteClient.layer({ filename, disableWAL: true })
    )
  )

const configure = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // These settings belong to the connection, not the file, so they are set on every open.
  yield* sql`PRAGMA busy_timeout = 5000`
  yield* sql`PRAGMA foreign_keys = ON`
  // Deleted rows are overwritten with zeros, not only unlinked, so an erasure's text leaves the pages
  // (docs/security.md#erasure). Writes that delete nothing, as appends, pay nothing for it.
  yield* sql`PRAGMA main.secure_delete = ON`
  yield* SqliteMigrations.run
  // Once started, a write waits for another process's lock on a timer (`writeLock`), never with the thread.
  yield* sql`PRAGMA busy_timeout = 0`
})

/**
 * The `FileRepository`, `OperatorStore` and `WebhookStore` of one SQLite database, migrated when the layer is
 * built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: SqliteStorageOptions): SqlStorage.SqlStorage => {
  return Layer.scopedContext(
    Effect.gen(function* () {
      const filename = yield* SqliteClient.SqliteClient.pipe(Effect.map((client) => client.config.filename))
      yield* configure
      const files = yield* SqliteFileRepository.make({
        filename,
        pageSize: options.pageSize ?? SqliteFileRepository.defaultPageSize
      })
      const operator = yield* SqliteOperatorStore.make
      // Another process's commits are heard from the WAL's watch, which pokes the poll, and seen by the probe
      // while requests wait; this process's appends poke it too. The look ends the readers' shared snapshot
      // first: begun just before the commit the probe saw, it would hide it, and the probe would not tell again.
      const commits = yield* CommitProbe.make(filename, SubmissionSignals.defaultProbeMillis)
      const signals = yield* SubmissionSignals.polled({
        changesAfter: (position) =>
          Effect.suspend(() => {
            files.endSnapshot()
            return files.changesAfter(position)
          }),
        position: Number,
        intervalMillis: options.signalIntervalMillis ?? SubmissionSignals.defaultIntervalMillis,
        probe: commits.probe
      })
      // Watched from the first wait, so a process nobody waits on (the CLI) watches nothing.
      const watch = Effect.sync(() => commits.watch(() => Effect.runSync(signals.poke)))
      // Writes run on the client's connection in this same thread, each around the reader's snapshot.
      const { aroundWrite } = files
      const store: OperatorStore.OperatorStore = {
        ...operator,
        importFixture: (fixture) => aroundWrite(operator.importFixture(fixture)),
        appendSubmissions: (source) => Effect.tap(aroundWrite(operator.appendSubmissions(source)), () => signals.poke),
        eraseSubmissions: (fileId, selection) =>
          Effect.tap(aroundWrite(operator.eraseSubmissions(fileId, selection)), () => signals.poke),
        createKey: (userId, apiKey) => aroundWrite(operator.createKey(userId, apiKey)),
        revokeKey: (keyId) => aroundWrite(operator.revokeKey(keyId)),
        createUser: (userId) => aroundWrite(operator.createUser(userId))
      }
      const webhooks = yield* SqlWebhookStore.make(SqliteOperatorStore.dialect, { aroundWrite })
      return Context.make(FileRepository.FileRepository, files).pipe(
        Context.add(OperatorStore.OperatorStore, store),
        Context.add(WebhookStore.WebhookStore, webhooks),
        Context.add(SubmissionSignals.SubmissionSignals, {
          changed: (fileId, readPoint, waitOptions) =>
            Effect.zipRight(watch, signals.changed(fileId, readPoint, waitOptions)),
          committed: Effect.zipRight(watch, signals.committed)
        })
      )
    })
  ).pipe(
    Layer.provide(
      options.filename === MEMORY ? Layer.unwrapScoped(Effect.map(temporaryDatabase, client)) : client(options.filename)
    ),
    // better-sqlite3 throws while opening an unusable file, which reaches us as a defect, not a SqlError.
    Layer.catchAllCause((cause) => Layer.fail(StorageFailure.unavailable(Cause.squash(cause))))
  )
}
