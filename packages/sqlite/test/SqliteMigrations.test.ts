import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import * as Migrator from "@effect/sql/Migrator"
import { describe, expect, it } from "@effect/vitest"
import { FileDataError, FileRepository } from "@filedata/core"
import { SqlMigrations } from "@filedata/sql"
import { SqliteStorage } from "@filedata/sqlite"
import { SqliteFiles } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { inspect, tempDatabase } from "./utils.js"

const start = (filename: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) => files.ping).pipe(
    Effect.provide(SqliteStorage.layer({ filename }))
  )

const refusal = (filename: string) => Effect.flip(Effect.scoped(Layer.build(SqliteStorage.layer({ filename }))))

// Everything the file holds that a migration could change: its schema and the recorded migrations.
const schemaOf = (filename: string) =>
  inspect(filename, (sql) =>
    Effect.all({
      schema: sql<{ name: string; sql: string | null }>`SELECT name, sql FROM sqlite_master ORDER BY name`,
      recorded: sql<{ migration_id: number; name: string }>`SELECT migration_id, name FROM effect_sql_migrations
        ORDER BY migration_id`
    })
  )

// A database as the first statements of filedata 0.x's migrations left it, written out here: the Migrator's table
// recording `1_create_tables`, and the tables that migration made, with a submission.
const madeBy0x = (filename: string, recorded: ReadonlyArray<readonly [number, string]>) => {
  mkdirSync(dirname(filename), { recursive: true })
  const db = SqliteFiles.connect(filename)
  try {
    // One line a table: the migration's own text is not kept, only what it made.
    db.exec(`CREATE TABLE effect_sql_migrations (migration_id integer PRIMARY KEY NOT NULL,
        created_at datetime NOT NULL DEFAULT current_timestamp, name VARCHAR(255) NOT NULL);
      CREATE TABLE users (id TEXT PRIMARY KEY NOT NULL) STRICT;
      CREATE TABLE files (id TEXT PRIMARY KEY NOT NULL, user_id TEXT NOT NULL REFERENCES users (id), name TEXT NOT NULL, creation_date INTEGER NOT NULL, public_availability INTEGER NOT NULL, submission_counter INTEGER NOT NULL, visit_counter INTEGER NOT NULL) STRICT;
      CREATE TABLE submissions (seq INTEGER PRIMARY KEY AUTOINCREMENT, file_id TEXT NOT NULL REFERENCES files (id), created_date INTEGER NOT NULL, content TEXT NOT NULL) STRICT;
      INSERT INTO users (id) VALUES ('u1');
      INSERT INTO files VALUES ('f1', 'u1', 'F', 0, 0, 1, 0);
      INSERT INTO submissions (file_id, created_date, content) VALUES ('f1', 0, '{"a":"1"}');`)
    const insert = db.prepare("INSERT INTO effect_sql_migrations (migration_id, name) VALUES (?, ?)")
    for (const [id, name] of recorded) insert.run(id, name)
  } finally {
    db.close()
  }
}

describe("SqliteMigrations", () => {
  it.scoped("a new database gets every migration: every stored form of a submission NOT NULL, no partial index", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const first = yield* Effect.zipRight(start(filename), schemaOf(filename))
      expect(first.recorded).toEqual([
        { migration_id: 1, name: "initial_schema" },
        { migration_id: 2, name: "submission_ids_and_changes" }
      ])
      const columns = yield* inspect(
        filename,
        (sql) => sql<{ name: string; notnull: number }>`SELECT name, "notnull" FROM pragma_table_info('submissions')`
      )
      expect(columns).toEqual([
        { name: "seq", notnull: 0 },
        { name: "file_id", notnull: 1 },
        { name: "created_date", notnull: 1 },
        { name: "content", notnull: 1 },
        { name: "entry", notnull: 1 },
        { name: "csv", notnull: 1 },
        { name: "csv_width", notnull: 1 },
        // NOT NULL by the store's rule: SQLite adds no such column without a default (SqliteMigrations).
        { name: "id", notnull: 0 }
      ])
      const indexes = yield* inspect(
        filename,
        (sql) => sql<{ name: string }>`SELECT name FROM sqlite_master
          WHERE type = 'index' AND tbl_name = 'submissions' AND sql IS NOT NULL ORDER BY name`
      )
      expect(indexes).toEqual([
        { name: "submissions_file_created_seq" },
        { name: "submissions_file_seq" },
        { name: "submissions_id" }
      ])
      // A restart finds nothing to do.
      yield* start(filename)
      expect(yield* schemaOf(filename)).toEqual(first)
    })
  )

  it.scoped("a database made by filedata 0.x's migrations is refused with what to do, and left as it was", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      madeBy0x(filename, [
        [1, "create_tables"],
        [2, "submission_entries"]
      ])
      const before = yield* schemaOf(filename)
      const error = yield* refusal(filename)
      expect(error).toBeInstanceOf(FileDataError.StorageUnavailable)
      expect(error.cause).toBeInstanceOf(Migrator.MigrationError)
      // Written out in the start-up line's test (packages/runtime/test/StartupFailure.test.ts).
      expect((error.cause as Migrator.MigrationError).message).toBe(SqlMigrations.madeBeforeInitialSchema)
      expect(yield* schemaOf(filename)).toEqual(before)
      expect(yield* inspect(filename, (sql) => sql`SELECT content FROM submissions`)).toEqual([
        { content: '{"a":"1"}' }
      ])
    })
  )

  it.scoped("a database recording a migration this version does not know is refused, naming it", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* start(filename)
      yield* inspect(filename, (sql) => sql`INSERT INTO effect_sql_migrations (migration_id, name) VALUES (3, 'later')`)
      const before = yield* schemaOf(filename)
      const error = yield* refusal(filename)
      expect((error.cause as Migrator.MigrationError).message).toBe(
        "this database records migrations this version of filedata does not know (3_later): it was made by another " +
          "version; run that version, or delete the database"
      )
      expect(yield* schemaOf(filename)).toEqual(before)
    })
  )
})
