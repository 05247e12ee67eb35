import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { FileData, FileDataError, RateLimiter } from "@filedata/core"
import { RateLimiting, StartupFailure, Storage } from "@filedata/runtime"
import { SqliteFiles } from "@filedata/testing"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "filedata-startup-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const buildFailure = <A, E>(layer: Layer.Layer<A, E>) => Effect.flip(Effect.scoped(Layer.build(layer)))

describe("StartupFailure.causeMessage", () => {
  it("joins the chain outermost first, skips the port's wrapper and messages already said", () => {
    const driver = Object.assign(new Error('database "nope" does not exist'), { code: "3D000" })
    const sql = Object.assign(new Error("PgClient: Failed to connect", { cause: driver }), { _tag: "SqlError" })
    const port = new FileDataError.StorageUnavailable({ cause: sql })
    expect(StartupFailure.causeMessage(port)).toBe('PgClient: Failed to connect: database "nope" does not exist')
    const os = new Error("ENOTDIR: not a directory, mkdir '/f/x'")
    expect(StartupFailure.causeMessage(new Error(`cannot create /f/x: ${os.message}`, { cause: os }))).toBe(
      "cannot create /f/x: ENOTDIR: not a directory, mkdir '/f/x'"
    )
  })

  it("lists each attempt of an AggregateError, which has no message of its own", () => {
    const refused = new AggregateError([
      new Error("connect ECONNREFUSED ::1:1"),
      new Error("connect ECONNREFUSED 127.0.0.1:1")
    ])
    expect(StartupFailure.causeMessage(refused)).toBe("connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1")
  })
})

describe("Storage.layer at start", () => {
  it.scoped("a SQLite path under a regular file: the variable, the path and the OS's reason", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      writeFileSync(join(dir, "regular"), "")
      const filename = join(dir, "regular", "under", "it.db")
      const error = yield* buildFailure(Storage.layer({ database: { _tag: "Sqlite", filename } }))
      expect(error).toBeInstanceOf(StartupFailure.DependencyUnavailable)
      expect(StartupFailure.describe(error)).toBe(
        `Cannot start: the database at DATABASE_URL=file:${filename} is not available: ` +
          `cannot create the directory ${join(dir, "regular", "under")}: ENOTDIR: not a directory, mkdir '${join(dir, "regular", "under")}'`
      )
    })
  )

  it.scoped("a SQLite database made by filedata 0.x's migrations: the line says what to do with it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const filename = join(dir, "old.db")
      const db = SqliteFiles.connect(filename)
      db.exec(`CREATE TABLE effect_sql_migrations (migration_id integer PRIMARY KEY NOT NULL,
        created_at datetime NOT NULL DEFAULT current_timestamp, name VARCHAR(255) NOT NULL);
        CREATE TABLE users (id TEXT PRIMARY KEY NOT NULL) STRICT;
        INSERT INTO effect_sql_migrations (migration_id, name) VALUES (1, 'create_tables')`)
      db.close()
      const error = yield* buildFailure(Storage.layer({ database: { _tag: "Sqlite", filename } }))
      expect(StartupFailure.describe(error)).toBe(
        `Cannot start: the database at DATABASE_URL=file:${filename} is not available: this database was created ` +
          "by filedata 0.x before its initial schema (its migrations table records 1_create_tables), and this " +
          "version does not upgrade it: export the files you need with that version and import them into a new " +
          "database, or delete the database"
      )
    })
  )

  it.live("a refused PostgreSQL port: the address without its password, and the driver's reason", () =>
    Effect.gen(function* () {
      const url = Redacted.make("postgres://filedata:s3cret@127.0.0.1:1/filedata")
      const line = StartupFailure.describe(yield* buildFailure(Storage.layer({ database: { _tag: "Postgres", url } })))
      expect(line).toBe(
        "Cannot start: the database at DATABASE_URL=postgres://***@127.0.0.1:1/filedata is not available: " +
          "PgClient: Failed to connect: connect ECONNREFUSED 127.0.0.1:1"
      )
    })
  )

  it.live("layerConfig reads DATABASE_URL", () =>
    Effect.gen(function* () {
      const error = yield* buildFailure(Storage.layerConfig).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", "postgres://127.0.0.1:1/x"]])))
      )
      expect(StartupFailure.describe(error)).toMatch(
        /^Cannot start: the database at DATABASE_URL=postgres:\/\/127\.0\.0\.1:1\/x /
      )
    })
  )
})

describe("RateLimiting.layer at start", () => {
  it.live("a refused Redis port: the address without its password, and the client's reason", () =>
    Effect.gen(function* () {
      const error = yield* buildFailure(
        RateLimiting.layer({
          policy: {
            apiKey: { limit: 1, windowMillis: 1_000 },
            clientAddress: { limit: 1, windowMillis: 1_000 }
          },
          redisUrl: Option.some(Redacted.make("redis://:s3cret@127.0.0.1:1")),
          failureMode: "memory"
        })
      )
      expect(StartupFailure.describe(error)).toBe(
        "Cannot start: Redis at REDIS_URL=redis://***@127.0.0.1:1 is not available: connect ECONNREFUSED 127.0.0.1:1"
      )
    })
  )

  it.effect("layerConfig without REDIS_URL counts in memory and needs nothing", () =>
    Effect.gen(function* () {
      const limiter = Context.get(yield* Layer.build(RateLimiting.layerConfig), RateLimiter.RateLimiter)
      expect(limiter.counting === undefined ? undefined : yield* limiter.counting).toBe("memory")
      const subject = { scope: "apiKey", apiKey: Redacted.make(FileData.ApiKeyText.make("k")) } as const
      expect((yield* limiter.consume(subject)).remaining).toBe(1)
      expect((yield* limiter.consume(subject)).remaining).toBe(0)
      const refused = yield* Effect.flip(limiter.consume(subject))
      expect(refused).toBeInstanceOf(FileDataError.RateLimited)
    }).pipe(Effect.scoped, Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["RATE_LIMIT_MAX", "2"]]))))
  )
})
