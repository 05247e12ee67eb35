import * as Migrator from "@effect/sql/Migrator"
import { describe, expect, it } from "@effect/vitest"
import { FileDataError, FileRepository } from "@filedata/core"
import { PgStorage } from "@filedata/postgres"
import { SqlMigrations } from "@filedata/sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { admin, tempSchema, testDatabaseUrl, urlForSchema } from "./utils.js"

const start = (schema: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) => files.ping).pipe(
    Effect.provide(PgStorage.layer({ url: urlForSchema(schema), poolMax: 1 }))
  )

// The schema's columns, indexes, triggers and recorded migrations: what a migration could change.
const schemaOf = (schema: string) =>
  admin((sql) =>
    Effect.all({
      columns: sql<{ table_name: string; column_name: string; is_nullable: string }>`
        SELECT table_name, column_name, is_nullable FROM information_schema.columns
        WHERE table_schema = ${schema} ORDER BY table_name, ordinal_position`,
      indexes: sql<{ indexname: string; indexdef: string }>`SELECT indexname, indexdef FROM pg_indexes
        WHERE schemaname = ${schema} ORDER BY indexname`,
      triggers: sql<{ trigger_name: string }>`SELECT DISTINCT trigger_name FROM information_schema.triggers
        WHERE trigger_schema = ${schema} ORDER BY trigger_name`,
      recorded: sql<{ migration_id: number; name: string }>`SELECT migration_id, name
        FROM ${sql(schema)}.effect_sql_migrations ORDER BY migration_id`
    })
  )

describe.skipIf(testDatabaseUrl === undefined)("PgMigrations on PostgreSQL (TEST_DATABASE_URL)", () => {
  it.scoped("a new database gets every migration: every stored form of a submission NOT NULL, no partial index", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      yield* start(schema)
      const first = yield* schemaOf(schema)
      expect(first.recorded).toEqual([
        { migration_id: 1, name: "initial_schema" },
        { migration_id: 2, name: "submission_ids_and_changes" }
      ])
      expect(
        first.columns
          .filter((column) => column.table_name === "submissions")
          .map((column) => `${column.column_name} ${column.is_nullable}`)
      ).toEqual([
        "seq NO",
        "file_id NO",
        "created_date NO",
        "content NO",
        "entry NO",
        "csv NO",
        "csv_width NO",
        "id NO"
      ])
      expect(first.indexes.filter((index) => index.indexdef.includes(".submissions ")).map((i) => i.indexname)).toEqual(
        ["submissions_file_created_seq", "submissions_file_seq", "submissions_id", "submissions_pkey"]
      )
      expect(first.triggers.map((trigger) => trigger.trigger_name)).toEqual([
        "submission_erasures_advance_read_point",
        "submission_erasures_notify",
        "submissions_advance_read_point",
        "submissions_notify"
      ])
      const readPoint = yield* admin((sql) => sql`SELECT seq FROM ${sql(schema)}.submission_read_point`)
      expect(readPoint).toEqual([{ seq: "0" }])
      // A restart finds nothing to do.
      yield* start(schema)
      expect(yield* schemaOf(schema)).toEqual(first)
    })
  )

  it.scoped("a database made by filedata 0.x's migrations is refused with what to do, and left as it was", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      // As the first statements of 0.x's migrations left it, written out here one line a table: the Migrator's
      // table recording `1_create_tables`, and the tables that migration made, with a submission.
      yield* admin((sql) =>
        sql.unsafe(`SET search_path TO "${schema}";
          CREATE TABLE effect_sql_migrations (migration_id integer PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT now(), name text NOT NULL);
          CREATE TABLE users (id text PRIMARY KEY);
          CREATE TABLE files (id text PRIMARY KEY, user_id text NOT NULL REFERENCES users (id), name text NOT NULL, creation_date timestamptz NOT NULL, public_availability boolean NOT NULL, submission_counter int8 NOT NULL, visit_counter int8 NOT NULL);
          CREATE TABLE submissions (seq bigserial PRIMARY KEY, file_id text NOT NULL REFERENCES files (id), created_date timestamptz NOT NULL, content text NOT NULL);
          INSERT INTO users (id) VALUES ('u1');
          INSERT INTO files VALUES ('f1', 'u1', 'F', now(), true, 1, 0);
          INSERT INTO submissions (file_id, created_date, content) VALUES ('f1', now(), '{"a":"1"}');
          INSERT INTO effect_sql_migrations (migration_id, name) VALUES (1, 'create_tables'), (2, 'submission_entries');
          RESET search_path`)
      )
      const before = yield* schemaOf(schema)
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(PgStorage.layer({ url: urlForSchema(schema), poolMax: 1 })))
      )
      expect(error).toBeInstanceOf(FileDataError.StorageUnavailable)
      expect(error.cause).toBeInstanceOf(Migrator.MigrationError)
      // Written out in the start-up line's test (packages/runtime/test/StartupFailure.test.ts).
      expect((error.cause as Migrator.MigrationError).message).toBe(SqlMigrations.madeBeforeInitialSchema)
      expect(yield* schemaOf(schema)).toEqual(before)
      expect(yield* admin((sql) => sql`SELECT content FROM ${sql(schema)}.submissions`)).toEqual([
        { content: '{"a":"1"}' }
      ])
    })
  )
})
