import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { FileRepository, OperatorStore, SubmissionSignals, WebhookStore } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import { SqliteFileRepository, SqliteStorage } from "@filedata/sqlite"
import Database from "better-sqlite3"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as CommitProbe from "../src/internal/commitProbe.js"
import { apiKey, counts, file, fileId, fixture, inspect, tempDatabase, tempDir, userId } from "./utils.js"

const open = (filename: string) => Effect.provide(SqliteStorage.layer({ filename }))

const expectStorageUnavailable = <A, E>(exit: Exit.Exit<A, E>) => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (Exit.isFailure(exit)) {
    expect(Cause.isDie(exit.cause)).toBe(false)
    expect(Cause.failureOption(exit.cause).pipe(Option.map((error) => (error as { _tag: string })._tag))).toEqual(
      Option.some("StorageUnavailable")
    )
  }
}

describe("SqliteStorage", () => {
  it.scoped("creates the parent directory and migrates idempotently when the same file is opened twice", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const document = yield* fixture({
        users: [{ id: "u1", apiKeys: ["k1"] }],
        files: [file({ id: "f1", userId: "u1" })]
      })
      yield* Effect.flatMap(OperatorStore.OperatorStore, (store) => store.importFixture(document)).pipe(open(filename))
      const access = yield* Effect.flatMap(FileRepository.FileRepository, (files) =>
        files.findAccess(apiKey("k1"), fileId("f1"))
      ).pipe(open(filename))
      expect(Option.isSome(access.file)).toBe(true)
      yield* Effect.void.pipe(open(filename))
      expect(yield* counts(filename)).toEqual({ users: 1, apiKeys: 1, files: 1, submissions: 0 })
      const migrations = yield* inspect(filename, (sql) => sql`SELECT migration_id, name FROM effect_sql_migrations`)
      expect(migrations).toEqual([
        { migration_id: 1, name: "initial_schema" },
        { migration_id: 2, name: "submission_ids_and_changes" }
      ])
    })
  )

  it.scopedLive("a write meeting another process's lock waits on a timer, never with the thread, then goes on", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const context = yield* Layer.build(SqliteStorage.layer({ filename }))
      const operator = Context.get(context, OperatorStore.OperatorStore)
      const webhooks = Context.get(context, WebhookStore.WebhookStore)
      yield* operator.importFixture(
        yield* fixture({ users: [{ id: "u1", apiKeys: ["k1"] }], files: [file({ id: "f1", userId: "u1" })] })
      )
      // Another process's write transaction, as the CLI's append holds it.
      const other = new Database(filename)
      yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
      other.exec("BEGIN IMMEDIATE")
      const write = yield* Effect.fork(operator.createUser(userId("u2")))
      const claim = yield* Effect.fork(webhooks.claim({ limit: 10, leaseMillis: 1000 }))
      // A busy handler sleeping the thread would hold these timers until it gave up, with both writes failed.
      for (let turn = 0; turn < 5; turn++) yield* Effect.sleep("20 millis")
      expect(Option.isNone(yield* Fiber.poll(write))).toBe(true)
      expect(Option.isNone(yield* Fiber.poll(claim))).toBe(true)
      other.exec("COMMIT")
      yield* Fiber.join(write)
      expect(yield* Fiber.join(claim)).toEqual([])
      expect(yield* counts(filename)).toMatchObject({ users: 2 })
    })
  )

  it.scopedLive(
    "a start on a new file another process holds waits on a timer, never with the thread, then migrates",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDatabase
        mkdirSync(dirname(filename), { recursive: true })
        // Another process reading the new file, still in its rollback journal: switching to WAL needs the file to
        // itself. Two imports opening a new file at once meet here, and SQLite refused one of them at once.
        const other = new Database(filename)
        yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
        other.exec("BEGIN")
        other.prepare("SELECT count(*) FROM sqlite_schema").get()
        const start = yield* Effect.fork(Effect.scoped(Layer.build(SqliteStorage.layer({ filename }))))
        // A busy handler sleeping the thread would hold these timers until it gave up, with the start failed.
        for (let turn = 0; turn < 5; turn++) yield* Effect.sleep("20 millis")
        expect(Option.isNone(yield* Fiber.poll(start))).toBe(true)
        other.exec("COMMIT")
        yield* Fiber.join(start)
        const mode = yield* inspect(filename, (sql) => sql<{ journal_mode: string }>`PRAGMA journal_mode`)
        expect(mode).toEqual([{ journal_mode: "wal" }])
        expect(yield* counts(filename)).toEqual({ users: 0, apiKeys: 0, files: 0, submissions: 0 })
      })
  )

  it.scopedLive("another process's append or erasure wakes waiters from the WAL's watch and the probe", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      // The poll's interval is out of reach: only the watch and the probe can end these waits within the bound.
      const waiting = yield* Layer.build(SqliteStorage.layer({ filename, signalIntervalMillis: 60_000 }))
      const signals = Context.get(waiting, SubmissionSignals.SubmissionSignals)
      const files = Context.get(waiting, FileRepository.FileRepository)
      yield* Context.get(waiting, OperatorStore.OperatorStore).importFixture(
        yield* fixture({ users: [{ id: "u1", apiKeys: ["k1"] }], files: [file({ id: "f1", userId: "u1" })] })
      )
      // The repository may answer as it is called: asked again each time.
      const readPoint = Effect.suspend(() =>
        Effect.map(files.findAccess(apiKey("k1"), fileId("f1")), (found) => Option.getOrThrow(found.file).readPoint)
      )
      // `committed` may end for a write that is no commit (the WAL's watch hears the first read after a write
      // too); a wait that stays for 200 ms is one that only a new write ends.
      const settled = Effect.gen(function* () {
        for (let round = 0; round < 10; round++) {
          const fiber = yield* Effect.fork(signals.committed)
          yield* Effect.sleep("200 millis")
          if (Option.isNone(yield* Fiber.poll(fiber))) return fiber
        }
        return yield* Effect.dieMessage("committed never settled")
      })
      // Another writer, as the CLI appending in a process of its own: nothing of it reaches this layer but the file.
      const other = yield* Layer.build(SqliteStorage.layer({ filename }))
      const appendOne = (n: string) =>
        Effect.flatMap(
          Effect.orDie(
            AppendDocument.decode({
              files: [{ id: "f1", submissions: [{ createdDate: "2024-02-01T00:00:00.000Z", content: { n } }] }]
            })
          ),
          Context.get(other, OperatorStore.OperatorStore).appendSubmissions
        )
      // Nobody waits on a file: no tick and no probe, and the WAL's watch alone ends `committed`. The contract's
      // 2 s as the bound: the figures themselves are the bench's (docs/performance.md).
      const alone = yield* settled
      yield* appendOne("1")
      yield* Fiber.join(alone).pipe(Effect.timeout("2 seconds"))
      const changed = yield* Effect.fork(signals.changed(fileId("f1"), yield* readPoint, { timeoutMillis: 60_000 }))
      yield* Effect.sleep("200 millis")
      expect(Option.isNone(yield* Fiber.poll(changed))).toBe(true)
      yield* appendOne("2")
      expect(yield* Fiber.join(changed).pipe(Effect.timeout("2 seconds"))).toBe(true)
      // An erasure as the erasing code commits it: its seq from the submissions' counter, in another process.
      const erasedWait = yield* Effect.fork(signals.changed(fileId("f1"), yield* readPoint, { timeoutMillis: 60_000 }))
      yield* Effect.sleep("200 millis")
      expect(Option.isNone(yield* Fiber.poll(erasedWait))).toBe(true)
      const eraser = new Database(filename)
      yield* Effect.addFinalizer(() => Effect.sync(() => eraser.close()))
      eraser.exec(`BEGIN IMMEDIATE;
        UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'submissions';
        INSERT INTO submission_erasures (seq, file_id, submission_id)
          SELECT seq, 'f1', 'sub_erased' FROM sqlite_sequence WHERE name = 'submissions';
        COMMIT`)
      expect(yield* Fiber.join(erasedWait).pipe(Effect.timeout("2 seconds"))).toBe(true)
    })
  )

  it.scoped("the probe sees another connection's commit, and nothing else", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.void.pipe(open(filename))
      const { probe } = yield* CommitProbe.make(filename, SubmissionSignals.defaultProbeMillis)
      expect(yield* probe.changed).toBe(false)
      const other = new Database(filename)
      yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
      other.prepare("SELECT count(*) FROM submissions").get()
      expect(yield* probe.changed).toBe(false)
      other.exec("INSERT INTO users (id) VALUES ('u1')")
      expect(yield* probe.changed).toBe(true)
      expect(yield* probe.changed).toBe(false)
    })
  )

  it.scoped("puts a file database in WAL mode", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.void.pipe(open(filename))
      // journal_mode is kept in the file itself, so another connection sees what the layer set.
      const mode = yield* inspect(filename, (sql) => sql<{ journal_mode: string }>`PRAGMA journal_mode`)
      expect(mode).toEqual([{ journal_mode: "wal" }])
    })
  )

  it.effect("works in memory: the reader sees what the writer wrote, and nothing is left behind", () =>
    Effect.gen(function* () {
      const before = new Set([...readdirSync(tmpdir()), ...readdirSync(process.cwd())])
      const stray = () =>
        [...readdirSync(tmpdir()), ...readdirSync(process.cwd())].filter(
          (name) => !before.has(name) && /filedata-memory|^file:/.test(name)
        )
      yield* Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        const files = yield* FileRepository.FileRepository
        yield* store.importFixture(
          yield* fixture({ users: [{ id: "u1", apiKeys: ["k1"] }], files: [file({ id: "f1", userId: "u1" })] })
        )
        expect(Option.isSome((yield* files.findAccess(apiKey("k1"), fileId("f1"))).file)).toBe(true)
        yield* files.ping
      }).pipe(open(":memory:"))
      // Two in-memory stores are separate databases.
      yield* Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        expect(yield* store.userExists(userId("u1"))).toBe(false)
      }).pipe(open(":memory:"))
      expect(stray()).toEqual([])
    })
  )

  it.scoped("fails with StorageUnavailable, not a defect, when the filename is a directory", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      expectStorageUnavailable(yield* Effect.exit(Effect.void.pipe(open(dir))))
    })
  )

  it.scoped("fails with StorageUnavailable when the file is not a database", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const filename = join(dir, "garbage.db")
      writeFileSync(filename, Buffer.alloc(8192, 7))
      expectStorageUnavailable(yield* Effect.exit(Effect.void.pipe(open(filename))))
    })
  )

  it.scoped("fails with StorageUnavailable when the parent directory cannot be created", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      writeFileSync(join(dir, "a-file"), "")
      expectStorageUnavailable(yield* Effect.exit(Effect.void.pipe(open(join(dir, "a-file", "filedata.db")))))
    })
  )

  it.scoped("a repository on a database that was never migrated fails with StorageUnavailable", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const filename = join(dir, "empty.db")
      new Database(filename).close()
      // Its statements are prepared up front, so "no such table" surfaces when it is made, not mid-request.
      expectStorageUnavailable(yield* Effect.exit(SqliteFileRepository.make({ filename, pageSize: 10 })))
    })
  )

  it.scoped("a missing database file is StorageUnavailable for the reader, never created by it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const filename = join(dir, "missing.db")
      expectStorageUnavailable(yield* Effect.exit(SqliteFileRepository.make({ filename, pageSize: 10 })))
      expect(existsSync(filename)).toBe(false)
    })
  )
})
