import { createHash } from "node:crypto"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { describe, expect, it } from "@effect/vitest"
import { ExportEncoder, ExportSubmissions, FileRepository, OperatorStore, SubmissionEntry } from "@filedata/core"
import { SqliteMigrations, SqliteStorage } from "@filedata/sqlite"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { apiKey, fileId, inspect, tempDatabase, userId } from "./utils.js"

// A database as the first release left it: only the first migration, submissions with their content column.
const migratedToFirst = (filename: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`PRAGMA journal_mode = WAL`
    const first = Effect.map(SqliteMigrations.loader, (all) => all.filter(([id]) => id === 1))
    yield* Migrator.make({})({ loader: first })
    yield* sql`INSERT INTO users (id) VALUES ('u1')`
    yield* sql`INSERT INTO files (id, user_id, name, creation_date, public_availability, submission_counter, visit_counter)
      VALUES ('f1', 'u1', 'F', 0, 0, 0, 0), ('f2', 'u1', 'G', 0, 0, 0, 0)`
    // More rows than one conversion step reads, ties on created_date, and seq values with gaps.
    for (let i = 0; i < 5_003; i++) {
      yield* sql`INSERT INTO submissions (seq, file_id, created_date, content) VALUES (${i * 2 + 1}, ${
        i % 3 === 0 ? "f2" : "f1"
      }, ${Date.UTC(2024, 0, 1) + Math.floor(i / 4)}, ${JSON.stringify({ i: String(i), "": "\u2028" })})`
    }
  }).pipe(Effect.provide(SqliteClient.layer({ filename })))

type OldRow = { seq: number; file_id: string; created_date: number; content: string }

const readAll = (filename: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) =>
    Effect.all(
      ["f1", "f2"].map((id) =>
        Stream.runCollect(FileRepository.submissions(files, fileId(id))).pipe(Effect.map(Chunk.toReadonlyArray))
      )
    )
  ).pipe(Effect.provide(SqliteStorage.layer({ filename, pageSize: 700 })))

// The same through joined pages, as a reply of the whole file reads them.
const readAllJoined = (filename: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) =>
    Effect.forEach(["f1", "f2"], (id) =>
      Effect.gen(function* () {
        const texts: Array<string> = []
        let after: string | undefined
        for (;;) {
          const page = yield* FileRepository.readJoined(files)(fileId(id), { after, endPosition: false })
          if (page.count > 0) texts.push(FileRepository.joinedText(page))
          if (!page.hasMore) return JSON.parse(`[${texts.join(",")}]`) as ReadonlyArray<unknown>
          after = page.next
        }
      })
    )
  ).pipe(Effect.provide(SqliteStorage.layer({ filename, pageSize: 700 })))

// What the reply shows for a row as the first release stored it, in reply order.
const expectedReplies = (rows: ReadonlyArray<OldRow>) =>
  ["f1", "f2"].map((id) =>
    rows
      .filter((row) => row.file_id === id)
      .sort((a, b) => a.created_date - b.created_date || a.seq - b.seq)
      .map((row) => SubmissionEntry.parse(SubmissionEntry.render(row.created_date, row.content)))
  )

describe("SqliteMigrations", () => {
  it.scoped("a database of the first release gets every submission's entry, and keeps its content", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      mkdirSync(dirname(filename), { recursive: true })
      yield* migratedToFirst(filename)
      const before = yield* inspect(
        filename,
        (sql) => sql<OldRow>`SELECT seq, file_id, created_date, content FROM submissions ORDER BY seq`
      )

      const read = yield* readAll(filename)

      const after = yield* inspect(
        filename,
        (sql) =>
          sql<
            OldRow & { entry: string }
          >`SELECT seq, file_id, created_date, content, entry FROM submissions ORDER BY seq`
      )
      expect(after).toEqual(
        before.map((row) => ({ ...row, entry: SubmissionEntry.render(row.created_date, row.content) }))
      )
      expect(read).toEqual(expectedReplies(before))
      // Only added: an instance of the first release still finds every column it reads and writes.
      const columns = yield* inspect(
        filename,
        (sql) => sql<{ name: string; notnull: number }>`SELECT name, "notnull" FROM pragma_table_info('submissions')`
      )
      expect(columns).toEqual([
        { name: "seq", notnull: 0 },
        { name: "file_id", notnull: 1 },
        { name: "created_date", notnull: 1 },
        { name: "content", notnull: 1 },
        { name: "entry", notnull: 0 },
        { name: "csv", notnull: 0 },
        { name: "csv_width", notnull: 0 }
      ])
      const sequence = yield* inspect(
        filename,
        (sql) => sql<{ seq: number }>`SELECT seq FROM sqlite_sequence WHERE name = 'submissions'`
      )
      expect(sequence).toEqual([{ seq: 5_002 * 2 + 1 }])
    })
  )

  it.scoped("rows the previous release imports after the upgrade, without an entry, are read like the rest", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      mkdirSync(dirname(filename), { recursive: true })
      yield* migratedToFirst(filename)
      yield* readAll(filename)
      // As the first release's import writes them: no entry. Ties with and between converted rows; the last
      // one far enough into its file to be read in a joined page, past the first page's 700 rows.
      yield* inspect(
        filename,
        (sql) => sql`INSERT INTO submissions (file_id, created_date, content) VALUES
          ('f1', ${Date.UTC(2024, 0, 1) + 3}, '{"late":"1"}'),
          ('f1', ${Date.UTC(2024, 0, 1)}, '{"late":"2"}'),
          ('f2', ${Date.UTC(2023, 0, 1)}, '{"late":"3"}'),
          ('f1', ${Date.UTC(2024, 0, 1) + 1000}, '{"late":"4"}')`
      )
      const rows = yield* inspect(
        filename,
        (sql) => sql<OldRow>`SELECT seq, file_id, created_date, content FROM submissions ORDER BY seq`
      )
      expect(yield* readAll(filename)).toEqual(expectedReplies(rows))
      expect(yield* readAllJoined(filename)).toEqual(
        expectedReplies(rows).map((replies) =>
          replies.map((row) => ({ createdDate: row.createdDate, content: JSON.parse(row.contentJson) }))
        )
      )
    })
  )

  it.scoped("migration 3 adds a nullable key prefix: older keys have none, new ones get theirs", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      mkdirSync(dirname(filename), { recursive: true })
      const hash = (text: string) => createHash("sha256").update(text).digest("hex")
      // As the second release left it, with a key, and a key that release creates after the upgrade.
      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const second = Effect.map(SqliteMigrations.loader, (all) => all.filter(([id]) => id <= 2))
        yield* Migrator.make({})({ loader: second })
        yield* sql`INSERT INTO users (id) VALUES ('u1')`
        yield* sql`INSERT INTO api_keys (user_id, key_hash, created_at) VALUES ('u1', ${hash("old-key")}, 0)`
      }).pipe(Effect.provide(SqliteClient.layer({ filename })))
      const withStore = <A, E>(f: (store: OperatorStore.OperatorStore) => Effect.Effect<A, E>) =>
        Effect.flatMap(OperatorStore.OperatorStore, f).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect((yield* withStore((store) => store.listKeys(Option.none()))).map((key) => key.prefix)).toEqual([
        Option.none()
      ])
      yield* inspect(
        filename,
        (sql) =>
          sql`INSERT INTO api_keys (user_id, key_hash, created_at) VALUES ('u1', ${hash("older-release-key")}, 0)`
      )
      const long = `fdk_${"A".repeat(43)}`
      const created = yield* withStore((store) => store.createKey(userId("u1"), apiKey(long)))
      expect(created.prefix).toEqual(Option.some("fdk_AAAA"))
      const keys = yield* withStore((store) => store.listKeys(Option.none()))
      expect(keys.map((key) => key.prefix)).toEqual([Option.none(), Option.none(), Option.some("fdk_AAAA")])
      const found = yield* withStore((store) => store.findKey(apiKey("older-release-key")))
      expect(Option.map(found, (key) => key.id)).toEqual(Option.some(keys[1]?.id))
      const columns = yield* inspect(
        filename,
        (sql) => sql<{ name: string; notnull: number }>`SELECT name, "notnull" FROM pragma_table_info('api_keys')`
      )
      expect(columns.at(-1)).toEqual({ name: "key_prefix", notnull: 0 })
    })
  )

  it.scoped("migration 6 fills each file's content names in the order of first insertion, beyond one step", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      mkdirSync(dirname(filename), { recursive: true })
      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const fifth = Effect.map(SqliteMigrations.loader, (all) => all.filter(([id]) => id <= 5))
        yield* Migrator.make({})({ loader: fifth })
        yield* sql`INSERT INTO users (id) VALUES ('u1')`
        yield* sql`INSERT INTO files (id, user_id, name, creation_date, public_availability, submission_counter, visit_counter)
          VALUES ('f1', 'u1', 'F', 0, 0, 0, 0), ('f2', 'u1', 'G', 0, 0, 0, 0), ('f3', 'u1', 'H', 0, 0, 0, 0)`
        // More rows than a step reads; a name first seen late, and created dates against insertion order.
        for (let i = 0; i < 5_003; i++) {
          const content = i === 5_002 ? { late: "x", a: "y" } : i % 2 === 0 ? { a: "1", "": "2" } : { "a,b": "3" }
          yield* sql`INSERT INTO submissions (file_id, created_date, content) VALUES (${i % 2 === 0 ? "f1" : "f2"},
            ${Date.UTC(2024, 0, 1) - i}, ${JSON.stringify(content)})`
        }
      }).pipe(Effect.provide(SqliteClient.layer({ filename })))
      const names = yield* Effect.flatMap(FileRepository.FileRepository, (files) =>
        Effect.forEach(["f1", "f2", "f3"], (id) =>
          Effect.flatMap(files.findFile(fileId(id)), (found) =>
            files.readContentNames(fileId(id), Option.getOrThrow(found).readPoint)
          )
        )
      ).pipe(Effect.provide(SqliteStorage.layer({ filename })))
      expect(names).toEqual([["a", "", "late"], ["a,b"], []])
    })
  )

  it.scoped("migration 9 stores each row's CSV row, and an export of it and of rows without one is unchanged", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      mkdirSync(dirname(filename), { recursive: true })
      const migrateTo = (last: number) =>
        Migrator.make({})({ loader: Effect.map(SqliteMigrations.loader, (all) => all.filter(([id]) => id <= last)) })
      const insert = (content: Record<string, string>, i: number) =>
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`INSERT INTO submissions (file_id, created_date, content)
            VALUES ('f1', ${Date.UTC(2024, 0, 1) - (i % 7)}, ${JSON.stringify(content)})`
        )
      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* migrateTo(5)
        yield* sql`INSERT INTO users (id) VALUES ('u1')`
        yield* sql`INSERT INTO files (id, user_id, name, creation_date, public_availability, submission_counter, visit_counter)
          VALUES ('f1', 'u1', 'F', 0, 0, 0, 0)`
        // More rows than a step reads, names in changing orders, values a spreadsheet would run.
        for (let i = 0; i < 5_003; i++) {
          yield* insert(
            i % 3 === 0 ? { b: `=${i}`, a: "x,y" } : i % 3 === 1 ? { a: String(i) } : { c: '"q"', b: "" },
            i
          )
        }
      }).pipe(Effect.provide(SqliteClient.layer({ filename })))
      // Migrated at start; then rows an instance of the previous release writes: no CSV row, a name it never listed.
      const count = (filename: string) =>
        inspect(
          filename,
          (sql) => sql<{ all: number; csv: number }>`SELECT count(*) AS "all", count(csv) AS csv FROM submissions`
        )
      const exportOf = Effect.flatMap(FileRepository.FileRepository, (files) =>
        Effect.gen(function* () {
          const found = Option.getOrThrow(yield* files.findFile(fileId("f1")))
          const names = yield* files.readContentNames(fileId("f1"), found.readPoint)
          const reply = yield* ExportSubmissions.exportFile(files, {
            fileId: fileId("f1"),
            format: "csv",
            since: undefined,
            until: undefined
          })
          const body = Chunk.join(yield* Stream.runCollect(ExportEncoder.encode(reply)), "")
          const rendered = yield* Stream.runCollect(FileRepository.submissions(files, fileId("f1"))).pipe(
            Effect.map((rows) =>
              Chunk.toReadonlyArray(rows)
                .map((row) => ExportEncoder.csvRows(names)(SubmissionEntry.fromStored(row)))
                .join("")
            )
          )
          return { body, expected: ExportEncoder.csvHeader(names) + rendered }
        })
      ).pipe(Effect.provide(SqliteStorage.layer({ filename, pageSize: 700 })))
      const migrated = yield* exportOf
      expect(migrated.body).toBe(migrated.expected)
      expect(migrated.body.split("\r\n")[0]).toBe("createdDate,b,a,c")
      expect(yield* count(filename)).toEqual([{ all: 5_003, csv: 5_003 }])
      yield* Effect.gen(function* () {
        yield* insert({ a: "old", c: "release" }, 1)
        yield* insert({ unlisted: "1", b: "=2" }, 2)
      }).pipe(Effect.provide(SqliteClient.layer({ filename })))
      expect(yield* count(filename)).toEqual([{ all: 5_005, csv: 5_003 }])
      const after = yield* exportOf
      expect(after.body).toBe(after.expected)
      expect(after.body).toContain("\r\n2023-12-31T23:59:59.999Z,,old,release\r\n")
    })
  )
})
