import { createHash } from "node:crypto"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import { FileData, FileRepository, OperatorStore, SubmissionEntry } from "@filedata/core"
import { PgMigrations, PgStorage } from "@filedata/postgres"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { importDocument, tempSchema, testDatabaseUrl, urlForSchema } from "./utils.js"

// A client of its own confined to the schema, outside the adapter.
const inSchema = <A, E>(schema: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(
    Effect.provide(PgClient.layer({ url: urlForSchema(schema), maxConnections: 1 })),
    Effect.orDie
  )

// Besides the bulk rows: an instant before 1970 and the last of year 9999, content text that is not in
// canonical form, and rows whose seq order is not their date order.
const odd = [
  { seq: 30_001, file: "f1", createdDate: "1969-12-31T23:59:59.999Z", content: '{ "b" : "1", "a" : "" }' },
  { seq: 30_003, file: "f1", createdDate: "9999-12-31T23:59:59.999Z", content: '{"s":"\\u0000 \u2028"}' },
  { seq: 30_005, file: "f2", createdDate: "2024-01-01T00:00:00.000Z", content: "{}" }
]

// A database as the first release left it: only the first migration, submissions with their content column.
const migratedToFirst = (schema: string) =>
  inSchema(schema, (sql) =>
    Effect.gen(function* () {
      const first = Effect.map(PgMigrations.loader, (all) => all.filter(([id]) => id === 1))
      yield* Migrator.make({})({ loader: first })
      yield* sql`INSERT INTO users (id) VALUES ('u1')`
      yield* sql`INSERT INTO api_keys (user_id, key_hash, created_at)
        VALUES ('u1', ${createHash("sha256").update("k1").digest("hex")}, now())`
      yield* sql`INSERT INTO files (id, user_id, name, creation_date, public_availability, submission_counter, visit_counter)
        VALUES ('f1', 'u1', 'F', now(), true, 0, 0), ('f2', 'u1', 'G', now(), true, 0, 0)`
      // More rows than two conversion steps read, ties on created_date, and seq values with gaps.
      yield* sql`INSERT INTO submissions (seq, file_id, created_date, content)
        SELECT i * 2 + 1, CASE WHEN i % 3 = 0 THEN 'f2' ELSE 'f1' END,
          timestamptz '2024-01-01 00:00:00+00' + (i / 4) * interval '1 millisecond',
          format('{"i":"%s"}', i)
        FROM generate_series(0, 10002) AS i`
      for (const row of odd) {
        yield* sql`INSERT INTO submissions (seq, file_id, created_date, content)
          VALUES (${row.seq}::int8, ${row.file}, ${row.createdDate}::timestamptz, ${row.content})`
      }
      // Where bigserial would stand had it numbered these rows itself.
      yield* sql`SELECT setval(pg_get_serial_sequence('submissions', 'seq'), (SELECT max(seq) FROM submissions))`
    })
  )

// int8 arrives as text.
interface Row {
  readonly seq: string
  readonly file_id: string
  readonly created_date: string
}

const rendered = (row: Row & { readonly content: string }): SubmissionEntry.SubmissionEntry =>
  SubmissionEntry.render(Number(row.created_date), row.content)

const replyOrder = (a: Row, b: Row): number =>
  Number(a.created_date) - Number(b.created_date) || Number(a.seq) - Number(b.seq)

describe.skipIf(testDatabaseUrl === undefined)("PgMigrations on PostgreSQL (TEST_DATABASE_URL)", () => {
  it.scoped("a database of the first release gets each submission stored as the reply writes it", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      yield* migratedToFirst(schema)
      const before = yield* inSchema(
        schema,
        (sql) => sql<Row & { readonly content: string }>`
          SELECT seq, file_id, (extract(epoch from created_date) * 1000)::int8 AS created_date, content
          FROM submissions ORDER BY seq`
      )

      const { read, added, readPoints } = yield* Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        const readPoint = Effect.map(
          files.findAccess(Redacted.make(FileData.ApiKeyText.make("k1")), FileData.FileId.make("f1")),
          (access) => Option.map(access.file, (file) => file.readPoint)
        )
        // The read point starts at the highest seq the migration found, and moves with each import.
        const first = yield* readPoint
        const read = yield* Effect.all(
          ["f1", "f2"].map((id) =>
            Stream.runCollect(FileRepository.submissions(files, FileData.FileId.make(id))).pipe(
              Effect.map(Chunk.toReadonlyArray)
            )
          )
        )
        // An import into the converted table goes on after the rows already there.
        yield* importDocument({
          files: [
            {
              id: "f3",
              userId: "u1",
              name: "H",
              creationDate: "2024-01-01T00:00:00.000Z",
              submissions: [{ createdDate: "2024-01-01T00:00:00.000Z", content: { n: "1" } }]
            }
          ]
        })
        const added = yield* Stream.runCollect(FileRepository.submissions(files, FileData.FileId.make("f3")))
        return { read, added: Chunk.toReadonlyArray(added), readPoints: [first, yield* readPoint] }
      }).pipe(Effect.provide(PgStorage.layer({ url: urlForSchema(schema), pageSize: 700, poolMax: 2 })))

      const after = yield* inSchema(
        schema,
        (sql) => sql<Row & { readonly content: string; readonly entry: string }>`
          SELECT seq, file_id, (extract(epoch from created_date) * 1000)::int8 AS created_date, content, entry
          FROM submissions ORDER BY seq`
      )
      expect(before).toHaveLength(10_003 + odd.length)
      // content is kept as it was, for older instances still running during a rolling deploy.
      expect(after.slice(0, before.length)).toEqual(before.map((row) => ({ ...row, entry: rendered(row) })))
      // Written out by hand, so the check does not rest on the function the migration calls alone.
      expect(after.filter((row) => Number(row.seq) > 30_000 && row.file_id !== "f3").map((row) => row.entry)).toEqual(
        odd.map((row) => `{"createdDate":"${row.createdDate}","content":${row.content}}`)
      )
      expect(Number(after[after.length - 1]?.seq)).toBeGreaterThan(30_005)
      // The import writes content too, so older instances read what this release imports.
      expect(after.slice(before.length).map(({ content, entry }) => ({ content, entry }))).toEqual([
        { content: '{"n":"1"}', entry: '{"createdDate":"2024-01-01T00:00:00.000Z","content":{"n":"1"}}' }
      ])

      for (const [index, id] of ["f1", "f2"].entries()) {
        expect(read[index]).toEqual(
          before
            .filter((row) => row.file_id === id)
            .sort(replyOrder)
            .map((row) => SubmissionEntry.parse(rendered(row)))
        )
      }
      expect(added).toEqual([{ createdDate: "2024-01-01T00:00:00.000Z", contentJson: '{"n":"1"}' }])
      expect(readPoints).toEqual([Option.some("30005"), Option.some(after[after.length - 1]?.seq)])

      const columns = yield* inSchema(
        schema,
        (sql) => sql<{ column_name: string; data_type: string; is_nullable: string }>`
          SELECT column_name, data_type, is_nullable FROM information_schema.columns
          WHERE table_schema = ${schema} AND table_name = 'submissions' ORDER BY ordinal_position`
      )
      expect(columns.map((c) => `${c.column_name} ${c.data_type} ${c.is_nullable}`)).toEqual([
        "seq bigint NO",
        "file_id text NO",
        "created_date timestamp with time zone NO",
        "content text NO",
        "entry text YES",
        "csv text YES",
        "csv_width integer YES"
      ])
      const recorded = yield* inSchema(
        schema,
        (sql) => sql`SELECT migration_id, name FROM effect_sql_migrations ORDER BY migration_id`
      )
      expect(recorded).toEqual([
        { migration_id: 1, name: "create_tables" },
        { migration_id: 2, name: "submission_entries" },
        { migration_id: 3, name: "api_key_prefixes" },
        { migration_id: 4, name: "submission_read_point" },
        { migration_id: 6, name: "content_names" },
        { migration_id: 7, name: "webhooks" },
        { migration_id: 8, name: "submission_notify" },
        { migration_id: 9, name: "csv_rows" }
      ])
    })
  )

  it.scoped("a row an older release imports after the migration, without entry, is read in reply order", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const file = FileData.FileId.make("f1")
      const entries = yield* Effect.gen(function* () {
        yield* importDocument({
          users: [{ id: "u1" }],
          files: [
            {
              id: "f1",
              userId: "u1",
              name: "F",
              creationDate: "2024-01-01T00:00:00.000Z",
              submissions: [
                { createdDate: "2024-01-01T00:00:01.000Z", content: { a: "1" } },
                { createdDate: "2024-01-01T00:00:03.000Z", content: { a: "3" } }
              ]
            }
          ]
        })
        // As the previous release's import writes, on the migrated schema: content only.
        yield* inSchema(schema, (sql) =>
          Effect.forEach(
            [
              ["2024-01-01T00:00:02.000Z", '{ "b" : "2" }'],
              ["2024-01-01T00:00:03.000Z", '{"b":"3"}'],
              ["2023-12-31T23:59:59.999Z", "{}"]
            ],
            ([createdDate, content]) =>
              sql`INSERT INTO submissions (file_id, created_date, content)
                VALUES ('f1', ${createdDate}::timestamptz, ${content})`,
            { discard: true }
          )
        )
        // Pages of two, so rows with and without entry share pages and positions fall on both kinds.
        const files = yield* FileRepository.FileRepository
        const entries: Array<string> = []
        let after: string | undefined
        let hasMore = true
        while (hasMore) {
          const page = yield* Effect.orDie(files.readSubmissions(file, { after }))
          entries.push(...page.entries)
          after = page.next
          hasMore = page.hasMore
        }
        return entries
      }).pipe(Effect.provide(PgStorage.layer({ url: urlForSchema(schema), pageSize: 2, poolMax: 2 })))

      // Tied rows in insertion order: the older release's row came after the imported one.
      expect(entries).toEqual([
        '{"createdDate":"2023-12-31T23:59:59.999Z","content":{}}',
        '{"createdDate":"2024-01-01T00:00:01.000Z","content":{"a":"1"}}',
        '{"createdDate":"2024-01-01T00:00:02.000Z","content":{ "b" : "2" }}',
        '{"createdDate":"2024-01-01T00:00:03.000Z","content":{"a":"3"}}',
        '{"createdDate":"2024-01-01T00:00:03.000Z","content":{"b":"3"}}'
      ])
      // A read renders such a row without writing it; a later release backfills it.
      const missing = yield* inSchema(
        schema,
        (sql) => sql<{ readonly n: string }>`SELECT count(*) AS n FROM submissions WHERE entry IS NULL`
      )
      expect(missing).toEqual([{ n: "3" }])
    })
  )

  it.scoped("migration 3 adds a nullable key prefix: older keys have none, new ones get theirs", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const hash = (text: string) => createHash("sha256").update(text).digest("hex")
      // As the second release left it, with a key.
      yield* inSchema(schema, (sql) =>
        Effect.gen(function* () {
          const second = Effect.map(PgMigrations.loader, (all) => all.filter(([id]) => id <= 2))
          yield* Migrator.make({})({ loader: second })
          yield* sql`INSERT INTO users (id) VALUES ('u1')`
          yield* sql`INSERT INTO api_keys (user_id, key_hash, created_at) VALUES ('u1', ${hash("old-key")}, now())`
        })
      )
      const withStore = <A, E>(f: (store: OperatorStore.OperatorStore) => Effect.Effect<A, E>) =>
        Effect.flatMap(OperatorStore.OperatorStore, f).pipe(
          Effect.provide(PgStorage.layer({ url: urlForSchema(schema), poolMax: 1 }))
        )
      expect((yield* withStore((store) => store.listKeys(Option.none()))).map((key) => key.prefix)).toEqual([
        Option.none()
      ])
      // A key the second release creates after the upgrade, without the column.
      yield* inSchema(
        schema,
        (sql) =>
          sql`INSERT INTO api_keys (user_id, key_hash, created_at) VALUES ('u1', ${hash("older-release-key")}, now())`
      )
      const created = yield* withStore((store) =>
        store.createKey(FileData.UserId.make("u1"), Redacted.make(FileData.ApiKeyText.make(`fdk_${"B".repeat(43)}`)))
      )
      expect(created.prefix).toEqual(Option.some("fdk_BBBB"))
      const keys = yield* withStore((store) => store.listKeys(Option.none()))
      expect(keys.map((key) => key.prefix)).toEqual([Option.none(), Option.none(), Option.some("fdk_BBBB")])
      const columns = yield* inSchema(
        schema,
        (sql) => sql<{ column_name: string; is_nullable: string }>`
          SELECT column_name, is_nullable FROM information_schema.columns
          WHERE table_schema = ${schema} AND table_name = 'api_keys' ORDER BY ordinal_position`
      )
      expect(columns.at(-1)).toEqual({ column_name: "key_prefix", is_nullable: "YES" })
    })
  )

  it.scoped("migration 6 fills each file's content names in the order of first insertion, beyond one step", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      yield* inSchema(schema, (sql) =>
        Effect.gen(function* () {
          const fourth = Effect.map(PgMigrations.loader, (all) => all.filter(([id]) => id <= 4))
          yield* Migrator.make({})({ loader: fourth })
          yield* sql`INSERT INTO users (id) VALUES ('u1')`
          yield* sql`INSERT INTO files (id, user_id, name, creation_date, public_availability, submission_counter, visit_counter)
            VALUES ('f1', 'u1', 'F', now(), true, 0, 0), ('f2', 'u1', 'G', now(), true, 0, 0), ('f3', 'u1', 'H', now(), true, 0, 0)`
          // More rows than a step reads; a name first seen late, and created dates against insertion order.
          yield* sql`INSERT INTO submissions (file_id, created_date, content)
            SELECT CASE WHEN i % 2 = 0 THEN 'f1' ELSE 'f2' END,
              timestamptz '2024-01-01 00:00:00+00' - i * interval '1 millisecond',
              CASE WHEN i = 5002 THEN '{"late":"x","a":"y"}' WHEN i % 2 = 0 THEN '{"a":"1","":"2"}' ELSE '{"a,b":"3"}' END
            FROM generate_series(0, 5002) AS i ORDER BY i`
        })
      )
      const names = yield* Effect.flatMap(FileRepository.FileRepository, (files) =>
        Effect.forEach(["f1", "f2", "f3"], (id) =>
          Effect.flatMap(files.findFile(FileData.FileId.make(id)), (found) =>
            files.readContentNames(FileData.FileId.make(id), Option.getOrThrow(found).readPoint)
          )
        )
      ).pipe(Effect.provide(PgStorage.layer({ url: urlForSchema(schema), poolMax: 1 })))
      expect(names).toEqual([["a", "", "late"], ["a,b"], []])
    })
  )
})
