import { readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import type * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { FileRepository, OperatorStore } from "@filedata/core"
import { SqliteFileRepository, SqliteStorage } from "@filedata/sqlite"
import { Conditions } from "@filedata/testing"
import Database from "better-sqlite3"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { joinedChangesSql } from "../src/internal/statements.js"
import { apiKey, file, fileId, fixture, inspect, tempDatabase, userId } from "./utils.js"

const withStorage = (filename: string, pageSize?: number) => Effect.provide(SqliteStorage.layer({ filename, pageSize }))

const importDocument = (document: unknown) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    return yield* store.importFixture(yield* fixture(document))
  })

const readSubmissions = (id: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) =>
    Stream.runCollect(FileRepository.submissions(files, fileId(id)))
  ).pipe(Effect.map(Chunk.toReadonlyArray))

const nextTurn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

// SHA-256 of the UTF-8 text, computed independently of the adapter.
const SHA256 = {
  "key-one": "9b346041bc9a49574eb2665b2ad2a0a3f9f9cce4e42f5d1f26deb8a256b5966a",
  "key-two": "c8df51469c308a59bfbd48a3e0bdd228ca922d6032035f5ef6e4ad45f473a9f3",
  "key-three": "2f06bcf4e8d96d66f0b8d972e1d9351a255f82ff4cf1a12b63c8d3642206547e"
}

describe("SqliteFileRepository", () => {
  it.scoped("finds the owner of a key by its SHA-256 hash, and not once the key is revoked", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        const store = yield* OperatorStore.OperatorStore
        yield* importDocument({ users: [{ id: "u1", apiKeys: ["key-one", "key-two"] }, { id: "u2" }] })
        const owner = (key: string) => Effect.map(files.findAccess(apiKey(key), fileId("f1")), (access) => access.owner)
        expect(yield* owner("key-one")).toEqual(Option.some("u1"))
        expect(yield* owner("key-two")).toEqual(Option.some("u1"))
        expect(yield* owner("key-three")).toEqual(Option.none())
        const created = yield* store.createKey(userId("u2"), apiKey("key-three"))
        expect(yield* owner("key-three")).toEqual(Option.some("u2"))
        yield* store.revokeKey(created.id)
        expect(yield* owner("key-three")).toEqual(Option.none())
        expect(yield* owner("key-one")).toEqual(Option.some("u1"))
      }).pipe(withStorage(filename))
      const stored = yield* inspect(
        filename,
        (sql) => sql<{ key_hash: string }>`SELECT key_hash FROM api_keys ORDER BY id`
      )
      expect(stored.map((row) => row.key_hash)).toEqual([SHA256["key-one"], SHA256["key-two"], SHA256["key-three"]])
    })
  )

  it.scoped("never writes the plain text of a key to the database files", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const imported = "plain-imported-key-6f1c2a"
      const created = "plain-created-key-93be7d"
      yield* Effect.gen(function* () {
        yield* importDocument({ users: [{ id: "u1", apiKeys: [imported] }] })
        const store = yield* OperatorStore.OperatorStore
        yield* store.createKey(userId("u1"), apiKey(created))
      }).pipe(withStorage(filename))
      // Every file SQLite left in the directory, the WAL and shared memory included if still there.
      const bytes = Buffer.concat(
        readdirSync(dirname(filename)).map((name) => readFileSync(join(dirname(filename), name)))
      )
      for (const text of [imported, created]) {
        expect(bytes.includes(Buffer.from(text, "utf8"))).toBe(false)
        expect(bytes.includes(Buffer.from(text, "utf16le"))).toBe(false)
      }
      expect(bytes.includes(Buffer.from("u1", "utf8"))).toBe(true)
    })
  )

  it.scoped("finds a file with its metadata in UTC with milliseconds, and not an unknown id", () =>
    Effect.gen(function* () {
      const files = yield* FileRepository.FileRepository
      const found = (id: string) => Effect.map(files.findAccess(apiKey("key-one"), fileId(id)), (access) => access.file)
      yield* importDocument({
        users: [{ id: "u1", apiKeys: ["key-one"] }],
        files: [
          {
            id: "f1",
            userId: "u1",
            name: "Contact form",
            creationDate: "2024-03-10T12:34:56.789+02:00",
            publicAvailability: true,
            SubmissionCounter: 7,
            VisitCounter: 42
          },
          { id: "f2", userId: "u1", name: "", creationDate: "2024-01-01T00:00:00+05:30" }
        ]
      })
      expect(yield* found("f1")).toEqual(
        Option.some({
          id: "f1",
          ownerId: "u1",
          name: "Contact form",
          creationDate: "2024-03-10T10:34:56.789Z",
          publicAvailability: true,
          SubmissionCounter: 7,
          VisitCounter: 42,
          readPoint: "0"
        })
      )
      expect(yield* found("f2")).toEqual(
        Option.some({
          id: "f2",
          ownerId: "u1",
          name: "",
          creationDate: "2023-12-31T18:30:00.000Z",
          publicAvailability: false,
          SubmissionCounter: 0,
          VisitCounter: 0,
          readPoint: "0"
        })
      )
      expect(yield* found("missing")).toEqual(Option.none())
      expect(yield* readSubmissions("missing")).toEqual([])
      expect(yield* readSubmissions("f2")).toEqual([])
      yield* files.ping
    }).pipe((self) => Effect.flatMap(tempDatabase, (filename) => withStorage(filename)(self)))
  )

  it.scoped("returns content exactly as given: odd keys, key order and unicode survive", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const text =
        '{"zeta":"1","__proto__":"polluted?","":"empty key","ключ":"значение 😀","a":"\\"quoted\\"\\n","constructor":"x"}'
      const content: unknown = JSON.parse(text)
      const submissions = yield* Effect.gen(function* () {
        yield* importDocument({
          users: [{ id: "u1" }],
          files: [file({ id: "f1", userId: "u1", submissions: [{ createdDate: "2024-01-02T09:30:00.000Z", content }] })]
        })
        return yield* readSubmissions("f1")
      }).pipe(withStorage(filename))
      expect(submissions).toEqual([{ createdDate: "2024-01-02T09:30:00.000Z", contentJson: text }])
      // Kept as the reply writes it, the content text inside unchanged.
      const stored = yield* inspect(
        filename,
        (sql) => sql<{ content: string; entry: string }>`SELECT content, entry FROM submissions`
      )
      expect(stored).toEqual([{ content: text, entry: `{"createdDate":"2024-01-02T09:30:00.000Z","content":${text}}` }])
    })
  )

  it.scoped("reads instants given with offsets back in UTC with milliseconds", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const submissions = yield* Effect.gen(function* () {
        yield* importDocument({
          users: [{ id: "u1" }],
          files: [
            file({
              id: "f1",
              userId: "u1",
              submissions: [
                { createdDate: "2024-06-01T00:00:00-07:00", content: { n: "1" } },
                { createdDate: "2024-06-01T09:00:00.5+02:00", content: { n: "2" } },
                { createdDate: "2024-06-01T05:00:00.123Z", content: { n: "3" } }
              ]
            })
          ]
        })
        return yield* readSubmissions("f1")
      }).pipe(withStorage(filename))
      expect(submissions.map((row) => row.createdDate)).toEqual([
        "2024-06-01T05:00:00.123Z",
        "2024-06-01T07:00:00.000Z",
        "2024-06-01T07:00:00.500Z"
      ])
    })
  )

  it.scoped.prop(
    "streams every submission ascending by createdDate, ties in insertion order, across page boundaries",
    {
      rows: FastCheck.array(
        FastCheck.record({
          file: FastCheck.constantFrom("f1", "f2"),
          // Few distinct instants, so tie groups are long and page boundaries fall inside them.
          minute: FastCheck.integer({ min: 0, max: 4 }),
          content: FastCheck.dictionary(FastCheck.string(), FastCheck.string(), { maxKeys: 3 })
        }),
        { maxLength: 40 }
      )
    },
    ({ rows }) =>
      Effect.gen(function* () {
        const filename = yield* tempDatabase
        const submissionsOf = (id: string) =>
          rows
            .filter((row) => row.file === id)
            .map((row) => ({
              createdDate: new Date(Date.UTC(2024, 0, 1, 0, row.minute)).toISOString(),
              content: row.content
            }))
        const { chunks, collected } = yield* Effect.gen(function* () {
          yield* importDocument({
            users: [{ id: "u1" }],
            files: [
              file({ id: "f1", userId: "u1", submissions: submissionsOf("f1") }),
              file({ id: "f2", userId: "u1", submissions: submissionsOf("f2") })
            ]
          })
          const files = yield* FileRepository.FileRepository
          const chunks = yield* Stream.runCollect(Stream.chunks(FileRepository.submissions(files, fileId("f1"))))
          return { chunks: Chunk.toReadonlyArray(chunks), collected: yield* readSubmissions("f2") }
        }).pipe(withStorage(filename, 3))
        const expected = (id: string) =>
          // Array.prototype.sort is stable, so ties keep document order.
          submissionsOf(id)
            .sort((a, b) => a.createdDate.localeCompare(b.createdDate))
            .map((row) => ({ createdDate: row.createdDate, contentJson: JSON.stringify(row.content) }))
        expect(chunks.every((chunk) => Chunk.size(chunk) <= 3)).toBe(true)
        expect(chunks.flatMap(Chunk.toReadonlyArray)).toEqual(expected("f1"))
        expect(collected).toEqual(expected("f2"))
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.scoped(
    "reads the key before the file, pages and the feed through indexes without sorting, the read point from the rowids (EXPLAIN QUERY PLAN)",
    () =>
      Effect.gen(function* () {
        const filename = yield* tempDatabase
        yield* Effect.void.pipe(withStorage(filename))
        // The same statements SqliteFileRepository sends for a request's access, a whole file's first page (the
        // page statement from the start, up to the read point alone), a page, where a full page ends, where the
        // range ends, a page of the feed, and the waiting requests' poll.
        const range = (sql: SqlClient.SqlClient, lower = 0, until = 1) =>
          sql`file_id = ${"f1"} AND created_date >= ${lower}
          AND (created_date > ${lower} OR (created_date = ${lower} AND seq > ${0}))
          AND created_date < ${until} AND seq <= ${5}`
        const start = Date.parse("0000-01-01T00:00:00.000Z")
        const plans = yield* inspect(filename, (sql) =>
          Effect.all([
            sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT k.user_id, f.user_id, f.name, f.creation_date,
            f.public_availability, f.submission_counter, f.visit_counter,
            max(coalesce((SELECT max(seq) FROM submissions), 0), coalesce((SELECT max(seq) FROM submission_erasures), 0))
            FROM api_keys k LEFT JOIN files f ON f.id = ${"f1"}
            WHERE k.key_hash = ${"hash"} AND k.revoked_at IS NULL`,
            sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT entry FROM submissions
            WHERE ${range(sql, start, Number.MAX_SAFE_INTEGER)} ORDER BY created_date, seq LIMIT ${1000}`,
            sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT entry FROM submissions WHERE ${range(sql)}
            ORDER BY created_date, seq LIMIT ${1000}`,
            sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT created_date, seq FROM submissions WHERE ${range(sql)}
            ORDER BY created_date, seq LIMIT 2 OFFSET ${999}`,
            sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT created_date, seq FROM submissions WHERE ${range(sql)}
            ORDER BY created_date DESC, seq DESC LIMIT 1`,
            sql<{ detail: string }>`EXPLAIN QUERY PLAN
            SELECT seq, id, entry FROM submissions WHERE file_id = ${"f1"} AND seq > ${0} AND seq <= ${5}
            UNION ALL SELECT seq, submission_id, NULL FROM submission_erasures
            WHERE file_id = ${"f1"} AND seq > ${0} AND seq <= ${5}
            ORDER BY 1 LIMIT ${1001}`,
            sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${joinedChangesSql("?")}`, [
              "f1",
              0,
              5,
              "f1",
              0,
              5,
              1000
            ]),
            sql<{ detail: string }>`EXPLAIN QUERY PLAN
            SELECT 1 FROM submissions WHERE file_id = ${"f1"} AND seq > ${0} AND seq <= ${5}
            UNION ALL SELECT 1 FROM submission_erasures WHERE file_id = ${"f1"} AND seq > ${0} AND seq <= ${5} LIMIT 1`,
            sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT file_id, max(seq) FROM (
            SELECT file_id, seq FROM submissions WHERE seq > ${0}
            UNION ALL SELECT file_id, seq FROM submission_erasures WHERE seq > ${0}) GROUP BY file_id`
          ])
        )
        expect(plans.map((plan) => plan.map((row) => row.detail))).toEqual([
          [
            "SEARCH k USING INDEX sqlite_autoindex_api_keys_1 (key_hash=?)",
            "SEARCH f USING INDEX sqlite_autoindex_files_1 (id=?) LEFT-JOIN",
            "SCALAR SUBQUERY 1",
            "SEARCH submissions",
            "SCALAR SUBQUERY 2",
            "SEARCH submission_erasures"
          ],
          [
            "SEARCH submissions USING INDEX submissions_file_created_seq (file_id=? AND created_date>? AND created_date<?)"
          ],
          [
            "SEARCH submissions USING INDEX submissions_file_created_seq (file_id=? AND created_date>? AND created_date<?)"
          ],
          [
            "SEARCH submissions USING COVERING INDEX submissions_file_created_seq (file_id=? AND created_date>? AND created_date<?)"
          ],
          [
            "SEARCH submissions USING COVERING INDEX submissions_file_created_seq (file_id=? AND created_date>? AND created_date<?)"
          ],
          [
            "MERGE (UNION ALL)",
            "LEFT",
            "SEARCH submissions USING INDEX submissions_file_seq (file_id=? AND seq>? AND seq<?)",
            "RIGHT",
            "SEARCH submission_erasures USING INDEX submission_erasures_file_seq (file_id=? AND seq>? AND seq<?)"
          ],
          [
            "CO-ROUTINE (subquery-2)",
            "MERGE (UNION ALL)",
            "LEFT",
            "SEARCH submissions USING INDEX submissions_file_seq (file_id=? AND seq>? AND seq<?)",
            "RIGHT",
            "SEARCH submission_erasures USING INDEX submission_erasures_file_seq (file_id=? AND seq>? AND seq<?)",
            "SCAN (subquery-2)"
          ],
          [
            "COMPOUND QUERY",
            "LEFT-MOST SUBQUERY",
            "SEARCH submissions USING COVERING INDEX submissions_file_seq (file_id=? AND seq>? AND seq<?)",
            "UNION ALL",
            "SEARCH submission_erasures USING COVERING INDEX submission_erasures_file_seq (file_id=? AND seq>? AND seq<?)"
          ],
          [
            "CO-ROUTINE (subquery-2)",
            "COMPOUND QUERY",
            "LEFT-MOST SUBQUERY",
            "SEARCH submissions USING INTEGER PRIMARY KEY (rowid>?)",
            "UNION ALL",
            "SEARCH submission_erasures USING INTEGER PRIMARY KEY (rowid>?)",
            "SCAN (subquery-2)",
            "USE TEMP B-TREE FOR GROUP BY"
          ]
        ])
      })
  )

  it.scopedLive("the reads of one turn share a snapshot, which ends within a millisecond or so", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        yield* importDocument({
          users: [{ id: "u1", apiKeys: ["key-one", "key-two"] }],
          files: [file({ id: "f1", userId: "u1" })]
        })
        const access = (key: string, repository: FileRepository.FileRepository = files) =>
          Effect.map(repository.findAccess(apiKey(key), fileId("f1")), ({ owner, file }) => [
            owner,
            Option.map(file, (found) => found.name)
          ])
        // No busy timeout: on this one thread the snapshot cannot end while a checkpoint waits for it.
        const other = new Database(filename, { timeout: 0 })
        yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))

        // Another connection commits between two reads of the same turn: the second read still agrees with
        // the first, as a request's access and pages must.
        expect(yield* access("key-one")).toEqual([Option.some("u1"), Option.some("File f1")])
        other.exec(
          `UPDATE api_keys SET revoked_at = 1 WHERE key_hash = '${SHA256["key-one"]}'; UPDATE files SET name = 'renamed'`
        )
        expect(yield* access("key-one")).toEqual([Option.some("u1"), Option.some("File f1")])
        expect(yield* access("key-two")).toEqual([Option.some("u1"), Option.some("File f1")])

        // A later turn, once the snapshot is a millisecond old, reads the commit (each try is a turn of its own).
        yield* Conditions.eventually(
          // Suspended: the adapter reads when its effect is made, and each try must read again.
          Effect.flatMap(
            Effect.suspend(() => access("key-one")),
            (found) => Effect.try(() => expect(found).toEqual([Option.none(), Option.none()]))
          ),
          { limitMillis: 1_000 }
        )
        expect(yield* access("key-two")).toEqual([Option.some("u1"), Option.some("renamed")])

        // A snapshot nobody renews is ended by its timer: an idle server holds none, so a checkpoint can take
        // the whole WAL.
        yield* nextTurn
        expect(other.pragma("wal_checkpoint(TRUNCATE)")).not.toEqual([{ busy: 0, log: 0, checkpointed: 0 }])
        yield* Conditions.eventually(
          Effect.try(() =>
            expect(other.pragma("wal_checkpoint(TRUNCATE)")).toEqual([{ busy: 0, log: 0, checkpointed: 0 }])
          ),
          { limitMillis: 1_000 }
        )

        // What the storage layer calls around its own writes ends the snapshot at once, within the turn.
        const reader = yield* SqliteFileRepository.make({ filename, pageSize: 10 })
        expect(yield* access("key-one", reader)).toEqual([Option.none(), Option.none()])
        other.exec("UPDATE api_keys SET revoked_at = NULL")
        expect(yield* access("key-one", reader)).toEqual([Option.none(), Option.none()])
        reader.endSnapshot()
        expect(yield* access("key-one", reader)).toEqual([Option.some("u1"), Option.some("renamed")])
      }).pipe(withStorage(filename))
    })
  )

  it.scoped("an erasure moves the read point up, is told by the feed and wakes the poll, its created change gone", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const tag = (entry: string) => JSON.parse(entry).content.tag
      yield* importDocument({
        users: [{ id: "u1", apiKeys: ["key-one"] }],
        files: ["a", "b", "c"].map((id) =>
          file({
            id,
            userId: "u1",
            submissions: [0, 1].map((i) => ({ createdDate: "2024-01-01T00:00:00.000Z", content: { tag: `${id}${i}` } }))
          })
        )
      }).pipe(withStorage(filename))
      const files = yield* SqliteFileRepository.make({ filename, pageSize: 10 })
      // Each call reads now: a read here is answered when it is made.
      const readPoint = () =>
        Effect.map(files.findFile(fileId("c")), (found) => Number(Option.getOrThrow(found).readPoint))
      const before = yield* readPoint()
      const [, last] = (yield* files.readSubmissions(fileId("c"), {})).ids
      // An erasure as the store writes one (SqliteMigrations): the next seq of the submissions' counter, taken
      // from sqlite_sequence and bumped there, for the erasure's row; the submission's row deleted. The erased
      // row is the highest seq, so the submissions' own highest seq drops.
      const other = new Database(filename)
      yield* Effect.addFinalizer(() => Effect.sync(() => other.close()))
      other.transaction(() => {
        other.prepare("UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'submissions'").run()
        other
          .prepare(`INSERT INTO submission_erasures (seq, file_id, submission_id)
            SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'submissions'), file_id, id FROM submissions WHERE id = ?`)
          .run(last)
        other.prepare("DELETE FROM submissions WHERE id = ?").run(last)
      })()
      files.endSnapshot()
      const after = yield* readPoint()
      expect(after).toBe(before + 1)
      const feed = yield* files.readChanges(fileId("c"), {})
      expect(
        feed.changes.map((change) => [change.type, change.type === "submission.created" && tag(change.entry)])
      ).toEqual([
        ["submission.created", "c0"],
        ["submission.erased", false]
      ])
      expect(feed.changes[1]).toEqual({ type: "submission.erased", id: last })
      expect(feed.next).toBe(String(after))
      // Bounded by the read point from before: the erased submission's created change is gone all the same.
      expect(
        (yield* files.readChanges(fileId("c"), { upTo: FileRepository.ReadPoint(String(before)) })).changes
      ).toHaveLength(1)
      expect(yield* files.readChanges(fileId("c"), { after: String(before) })).toEqual({
        changes: [{ type: "submission.erased", id: last }],
        next: String(after),
        hasMore: false
      })
      expect(yield* files.changesAfter(before)).toEqual({ files: ["c"], top: after })
      expect(yield* files.changesAfter(after)).toEqual({ files: [], top: undefined })
    })
  )
})
