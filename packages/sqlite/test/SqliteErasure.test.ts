import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Erasure, OperatorStore, SubmissionId, WebhookStore } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import { SqliteStorage } from "@filedata/sqlite"
import * as Effect from "effect/Effect"
import { file, fileId, fixture, inspect, tempDatabase } from "./utils.js"

const ERASED = "erase-me-7f3a9c"
const KEPT = "keep-me-5b81d2"

// Enough submissions that the erased ones span several pages, with content long enough to spill into overflow pages.
const contents = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    content: {
      email: i % 3 === 0 ? `${ERASED}-${i}@example.com` : `${KEPT}-${i}@example.com`,
      note: "x".repeat(i % 7 === 0 ? 6000 : 20)
    }
  }))

// The bytes of the database, its WAL and its shared-memory index, as the files hold them now.
const scan = (filename: string, marker: string) =>
  ["", "-wal", "-shm"].some(
    (suffix) => existsSync(`${filename}${suffix}`) && readFileSync(`${filename}${suffix}`).includes(marker)
  )

describe("SqliteStorage eraseSubmissions", () => {
  it.scoped("leaves no erased text in the database, its WAL or an outbox event, and keeps the rest", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        yield* store.importFixture(
          yield* fixture({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [file({ id: "f1", userId: "u1", submissions: contents(30) }), file({ id: "f2", userId: "u1" })]
          })
        )
        const webhooks = yield* WebhookStore.WebhookStore
        const webhook = yield* webhooks.create({
          fileId: fileId("f1"),
          url: "https://example.com/",
          sealSecret: () => Effect.succeed("s")
        })
        // Pending events that carry erased text, besides the rows themselves.
        yield* store.appendSubmissions(
          yield* Effect.orDie(AppendDocument.decode({ files: [{ id: "f1", submissions: contents(12) }] }))
        )
        // A delivered event of before ids (0.2), which names its submissions by their entries alone.
        const legacy = yield* inspect(filename, (sql) =>
          Effect.gen(function* () {
            // The first submission of the import is erased, the second kept (`contents`).
            const entryAt = (millis: number) =>
              Effect.map(
                sql<{
                  entry: string
                }>`SELECT entry FROM submissions WHERE created_date = ${millis} ORDER BY seq LIMIT 1`,
                ([row]) => row?.entry ?? ""
              )
            const erased = yield* entryAt(Date.UTC(2024, 0, 1))
            const kept = yield* entryAt(Date.UTC(2024, 0, 1) + 1000)
            const body = `{"type":"submissions.created","timestamp":"2024-01-01T00:00:00.000Z","data":{"fileId":"f1","SubmissionCounter":30,"VisitCounter":0,"submissions":[${erased},${kept}],"next":"n"}}`
            // As the service writes: a page this connection rewrote without it would keep old bytes of its own.
            yield* sql`PRAGMA main.secure_delete = ON`
            yield* sql`INSERT INTO webhook_events (id, webhook_id, body, created_at, state, step, attempts)
              VALUES ('msg_legacy', ${webhook.id}, ${body}, 0, 'delivered', 0, 1)`
            return { body, kept }
          })
        )
        expect(scan(filename, ERASED)).toBe(true)

        const ids = yield* inspect(
          filename,
          (sql) =>
            sql<{
              id: string
            }>`SELECT id FROM submissions WHERE content LIKE ${`%${ERASED}%`} ORDER BY created_date, seq`
        ).pipe(Effect.map((rows) => rows.map((row) => SubmissionId.unsafeStored(row.id))))
        const summary = yield* store.eraseSubmissions(fileId("f1"), {
          _tag: "Ids",
          ids: ids as [SubmissionId.SubmissionId, ...Array<SubmissionId.SubmissionId>]
        })
        expect(summary.ids.length).toBe(14)
        expect(summary.submissionCounter).toBe(42 - 14)

        // Scanned while the store's connections are open: closing the last one would checkpoint on its own.
        expect(existsSync(`${filename}-wal`)).toBe(true)
        expect(scan(filename, ERASED)).toBe(false)
        expect(scan(filename, KEPT)).toBe(true)
        const events = yield* inspect(
          filename,
          (sql) => sql<{ body: string }>`SELECT body FROM webhook_events ORDER BY seq`
        )
        const erased = events
          .map((event) => JSON.parse(event.body))
          .filter((body) => body.type === "submissions.erased")
        expect(erased.map((body) => body.data.ids)).toEqual([ids])
        const [scrubbed] = yield* inspect(
          filename,
          (sql) => sql<{ body: string }>`SELECT body FROM webhook_events WHERE id = 'msg_legacy'`
        )
        expect(JSON.parse(scrubbed?.body ?? "")).toEqual({
          ...JSON.parse(legacy.body),
          data: { ...JSON.parse(legacy.body).data, submissions: [JSON.parse(legacy.kept)] }
        })
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
    })
  )

  it.scoped("erases by content, once: the second erasure finds none and writes nothing", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        yield* store.importFixture(
          yield* fixture({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [file({ id: "f1", userId: "u1", submissions: contents(9) })]
          })
        )
        const summary = yield* store.eraseSubmissions(fileId("f1"), {
          _tag: "Where",
          matches: [{ name: "email", value: `${ERASED}-3@example.com` }]
        })
        expect(summary.ids.length).toBe(1)
        const none = yield* store.eraseSubmissions(fileId("f1"), {
          _tag: "Where",
          matches: [{ name: "email", value: `${ERASED}-3@example.com` }]
        })
        expect(none).toEqual({ fileId: "f1", ids: [], submissionCounter: 8, visitCounter: 0 })
        const refused = yield* Effect.flip(
          store.eraseSubmissions(fileId("nope"), { _tag: "Ids", ids: summary.ids as never })
        )
        expect(refused).toEqual(new Erasure.UnknownFile({ fileId: "nope" }))
        expect(scan(filename, `${ERASED}-3@`)).toBe(false)
        expect(scan(filename, `${ERASED}-6@`)).toBe(true)
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
    })
  )

  // The name goes into a JSON path as a quoted label (SqliteOperatorStore's contentHas): escapes and path syntax in
  // it name the member, nothing else.
  it.scoped("finds a name by content whatever characters it has: escapes, dots, brackets, `$`, none", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        const names = ["back\\slash", "new\nline", 'qu"ote', "a.b", "[0]", "$", "", "ünï"]
        yield* store.importFixture(
          yield* fixture({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [
              file({
                id: "f1",
                userId: "u1",
                submissions: names.map((name, i) => ({
                  createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
                  content: { [name]: "v", a: "other", b: "other" }
                }))
              })
            ]
          })
        )
        for (const [i, name] of names.entries()) {
          const summary = yield* store.eraseSubmissions(fileId("f1"), {
            _tag: "Where",
            matches: [{ name, value: "v" }]
          })
          expect([name, summary.ids.length, summary.submissionCounter]).toEqual([name, 1, names.length - i - 1])
        }
      }).pipe(Effect.provide(SqliteStorage.layer({ filename })))
    })
  )
})
