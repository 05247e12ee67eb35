// What the reader does when the database file goes wrong under it: deleted, replaced, overwritten, turned
// into a directory, made unreadable, locked. Every fault is StorageUnavailable (never a defect, never a
// hang), and the reader recovers by itself once a usable database is back at the path.

import { chmodSync, mkdirSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { FileRepository, OperatorStore } from "@filedata/core"
import { SqliteFileRepository, SqliteStorage } from "@filedata/sqlite"
import { Logs, SqliteFiles } from "@filedata/testing"
import Database from "better-sqlite3"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import { apiKey, file, fileId, fixture, tempDatabase, tempDir } from "./utils.js"

const document = {
  users: [{ id: "u1", apiKeys: ["k1"] }],
  files: [file({ id: "f1", userId: "u1", submissions: [{ createdDate: "2024-02-01T00:00:00Z", content: { a: "1" } }] })]
}

/** A migrated database at `filename` holding `document`, with the adapter's layer still open on it. */
const storage = (filename: string) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(SqliteStorage.layer({ filename }))
    yield* Context.get(context, OperatorStore.OperatorStore).importFixture(yield* fixture(document))
    return Context.get(context, FileRepository.FileRepository)
  })

// A migrated database in rollback-journal mode, as a restored backup often is: there a writer's lock does block
// readers.
const rollbackJournal = Effect.gen(function* () {
  const filename = yield* tempDatabase
  yield* Effect.scoped(storage(filename))
  const switching = new Database(filename)
  switching.pragma("journal_mode = DELETE")
  switching.close()
  return filename
})

const { backup, remove, restore } = SqliteFiles

const expectUnavailable = <A, E>(exit: Exit.Exit<A, E>) => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (Exit.isFailure(exit)) {
    expect(Cause.isDie(exit.cause)).toBe(false)
    expect(Cause.failureOption(exit.cause).pipe(Option.map((error) => (error as { _tag: string })._tag))).toEqual(
      Option.some("StorageUnavailable")
    )
  }
}

/** Every read of the port, the health check first (it looks at the file at once). */
const everyRead = (files: FileRepository.FileRepository) =>
  Effect.gen(function* () {
    yield* files.ping
    const { owner, file } = yield* files.findAccess(apiKey("k1"), fileId("f1"))
    const page = yield* files.readSubmissions(fileId("f1"), {})
    return { owner, found: Option.isSome(file), rows: page.entries.length }
  })

const healthy = { owner: Option.some("u1"), found: true, rows: 1 }

const expectRefused = (files: FileRepository.FileRepository) =>
  Effect.gen(function* () {
    expectUnavailable(yield* Effect.exit(files.ping))
    expectUnavailable(yield* Effect.exit(files.findAccess(apiKey("k1"), fileId("f1"))))
    expectUnavailable(yield* Effect.exit(files.readSubmissions(fileId("f1"), {})))
  })

/** Polls until every read works again, for a few seconds at most, and says how long that took. */
const recovered = (files: FileRepository.FileRepository) =>
  Effect.timed(everyRead(files).pipe(Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("5 seconds")))))

/** Backs the database up, lets `damage` break it, expects every read refused, restores it, expects recovery. */
const refusedUntilRestored = (filename: string, files: FileRepository.FileRepository, damage: () => void) =>
  Effect.gen(function* () {
    const saved = `${filename}.backup`
    backup(filename, saved)
    damage()
    yield* expectRefused(files)
    restore(saved, filename)
    expect((yield* recovered(files))[1]).toEqual(healthy)
  })

describe("SqliteFileRepository under faults", () => {
  it.scopedLive("a deleted database is refused at once, and read again once a backup is restored", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const files = yield* storage(filename)
      expect(yield* everyRead(files)).toEqual(healthy)
      const saved = `${filename}.backup`
      backup(filename, saved)

      remove(filename)
      yield* expectRefused(files)
      // Still refused on the next attempts, while nothing is at the path.
      yield* expectRefused(files)

      restore(saved, filename)
      const [took, reads] = yield* recovered(files)
      expect(reads).toEqual(healthy)
      expect(Duration.toMillis(took)).toBeLessThan(2_000)
    })
  )

  it.scopedLive("a database moved away and back is the same file: refused meanwhile, read again after", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const files = yield* storage(filename)
      renameSync(filename, `${filename}.away`)
      yield* expectRefused(files)
      renameSync(`${filename}.away`, filename)
      expect((yield* recovered(files))[1]).toEqual(healthy)
    })
  )

  it.scopedLive("a database replaced by another one is read from the new file, not the deleted one", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const files = yield* storage(filename)
      const other = join(yield* tempDir, "other.db")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(SqliteStorage.layer({ filename: other }))
          const store = Context.get(context, OperatorStore.OperatorStore)
          yield* store.importFixture(yield* fixture({ users: [{ id: "u2", apiKeys: ["k2"] }] }))
        })
      )
      restore(other, filename)
      yield* files.ping
      expect(yield* files.findAccess(apiKey("k2"), fileId("f1"))).toEqual({
        owner: Option.some("u2"),
        file: Option.none()
      })
      expect(yield* files.findAccess(apiKey("k1"), fileId("f1"))).toEqual(FileRepository.noAccess)
    })
  )

  it.scopedLive("a database without the schema at the path is refused, not an error, until a good one is back", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const files = yield* storage(filename)
      yield* refusedUntilRestored(filename, files, () => {
        const empty = `${filename}.empty`
        new Database(empty).close()
        restore(empty, filename)
      })
    })
  )

  it.scopedLive("a header overwritten with garbage in place is refused, though the pages are still cached", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const files = yield* storage(filename)
      expect(yield* everyRead(files)).toEqual(healthy)
      yield* refusedUntilRestored(filename, files, () => {
        // Pages still in the WAL would be read from there, whatever the main file holds; after a checkpoint
        // every page comes from the main file, as it does once writers are done.
        // It copies every page, then finds the reader's snapshot still open and gives up truncating: at once,
        // not after a busy timeout, since on this one thread the snapshot cannot end while it waits.
        const checkpoint = new Database(filename, { timeout: 0 })
        checkpoint.pragma("wal_checkpoint(TRUNCATE)")
        checkpoint.close()
        // Same file, new bytes: an open WAL connection would keep answering from its page cache.
        writeFileSync(filename, Buffer.alloc(4096, "garbage "))
      })
    })
  )

  it.scopedLive("the path turned into a directory is refused; the file put back is read again", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const files = yield* storage(filename)
      yield* refusedUntilRestored(filename, files, () => {
        remove(filename)
        mkdirSync(filename)
      })
    })
  )

  const root = process.getuid?.() === 0
  it.scopedLive.skipIf(root)(
    `a file made unreadable (chmod 000) is refused and read again once readable${root ? " (skipped: running as root, which reads any file whatever its mode)" : ""}`,
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDatabase
        const files = yield* storage(filename)
        chmodSync(filename, 0o000)
        yield* expectRefused(files)
        chmodSync(filename, 0o644)
        expect((yield* recovered(files))[1]).toEqual(healthy)
      })
  )

  it.scopedLive("in WAL mode another writer holding a write transaction does not block reads", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const files = yield* storage(filename)
      const writer = new Database(filename)
      yield* Effect.addFinalizer(() => Effect.sync(() => writer.close()))
      writer.exec("BEGIN EXCLUSIVE; INSERT INTO users (id) VALUES ('u9')")
      expect(yield* everyRead(files)).toEqual(healthy)
      writer.exec("ROLLBACK")
      // Nor can a writer asking for exclusive locking take the file away from the open reader.
      const locker = new Database(filename, { timeout: 0 })
      yield* Effect.addFinalizer(() => Effect.sync(() => locker.close()))
      locker.pragma("locking_mode = EXCLUSIVE")
      expect(() => locker.exec("BEGIN EXCLUSIVE")).toThrow(/locked|busy/i)
      expect(yield* everyRead(files)).toEqual(healthy)
    })
  )

  it.scopedLive("a database locked exclusively fails reads within the busy timeout, and is read after release", () =>
    Effect.gen(function* () {
      const filename = yield* rollbackJournal
      const files = yield* SqliteFileRepository.make({ filename, pageSize: 10 })
      expect(yield* everyRead(files)).toEqual(healthy)
      // The locker stands for another process. Here it shares the reader's thread, so it takes its lock in a
      // later turn of the event loop, once the reads of this one have let their shared lock go.
      yield* Effect.sleep(0)

      const locker = new Database(filename)
      locker.exec("BEGIN EXCLUSIVE; INSERT INTO users (id) VALUES ('u9')")
      const [first, exit] = yield* Effect.timed(Effect.exit(files.findAccess(apiKey("k1"), fileId("f1"))))
      expectUnavailable(exit)
      // Bounded by the busy timeout, never a hang; the margin is for a loaded machine.
      expect(Duration.toMillis(first)).toBeLessThan(2_000)
      yield* expectRefused(files)
      locker.exec("ROLLBACK")
      locker.close()
      expect((yield* recovered(files))[1]).toEqual(healthy)
    })
  )

  it.scopedLive("a start that finds the database locked waits for it as a writer would, then reads", () =>
    Effect.gen(function* () {
      const filename = yield* rollbackJournal
      // Another process's lock at the moment this one starts: two CLI runs on one file, the first checkpointing
      // as it closes while the second opens its reader. Longer than a request's 100 ms.
      const locker = new Database(filename)
      locker.exec("BEGIN EXCLUSIVE; INSERT INTO users (id) VALUES ('u9')")
      const released = setTimeout(() => {
        locker.exec("ROLLBACK")
        locker.close()
      }, 600)
      yield* Effect.addFinalizer(() => Effect.sync(() => clearTimeout(released)))
      const [took, files] = yield* Effect.timed(SqliteFileRepository.make({ filename, pageSize: 10 }))
      expect(Duration.toMillis(took)).toBeGreaterThanOrEqual(500)
      expect(yield* everyRead(files)).toEqual(healthy)
    })
  )

  it.scopedLive("warns once when the database goes away and says when it is readable again", () => {
    const { lines, logger } = Logs.capture()
    return Effect.gen(function* () {
      const filename = yield* tempDatabase
      const files = yield* storage(filename)
      const saved = `${filename}.backup`
      backup(filename, saved)
      remove(filename)
      for (let i = 0; i < 5; i++) yield* expectRefused(files)
      restore(saved, filename)
      yield* recovered(files)
      const ours = lines.filter((line) => /database/i.test(String(line.message)))
      expect(ours.map((line) => line.level)).toEqual(["WARN", "INFO"])
      expect(String(ours[0]?.message)).toContain("unavailable")
    }).pipe(Effect.provide(logger))
  })
})
