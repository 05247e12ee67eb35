/**
 * The `erasures` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import {
  EncodedPages,
  Erasure,
  ExportEncoder,
  ExportSubmissions,
  FileRepository,
  OperatorStore,
  type SubmissionId
} from "@filedata/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Fixtures from "./fixtures.js"

/**
 * Erasures: by ids and by content, refusals that write nothing, counters lowered, and no read, joined page or
 * export left with the erased content.
 *
 * @internal
 */
export const erasures = (withStorage: Fixtures.WithStorage): void => {
  describe("OperatorStore.eraseSubmissions", () => {
    const at = (i: number) => new Date(Date.UTC(2024, 5, 1) + i * 1000).toISOString()
    // Reply order is not insertion order: the instants go down, so the summary's order is the store's to keep.
    const row = (i: number, email: string, list = "news") => ({
      createdDate: at(100 - i),
      content: { tag: `t${i}`, email, list }
    })
    const base = {
      users: [{ id: "u1", apiKeys: ["k1"] }],
      files: [
        Fixtures.file({
          id: "f1",
          userId: "u1",
          submissions: [
            row(0, "ann@example.com"),
            row(1, "bob@example.com", "offers"),
            row(2, "ann@example.com", "offers"),
            row(3, "cy@example.com"),
            row(4, "ann@example.com")
          ]
        }),
        Fixtures.file({ id: "f2", userId: "u1", submissions: [row(5, "ann@example.com")] })
      ]
    }
    const erase = (id: string, selection: Erasure.Selection) =>
      Effect.flatMap(OperatorStore.OperatorStore, (store) => store.eraseSubmissions(Fixtures.fileId(id), selection))
    const where = (...matches: Array<[string, string]>): Erasure.Selection => ({
      _tag: "Where",
      matches: matches.map(([name, value]) => ({ name, value })) as [
        Erasure.ContentMatch,
        ...Array<Erasure.ContentMatch>
      ]
    })
    const byIds = (...ids: Array<string>): Erasure.Selection => ({
      _tag: "Ids",
      ids: ids as [SubmissionId.SubmissionId, ...Array<SubmissionId.SubmissionId>]
    })
    const tags = (id: string) =>
      Effect.map(Fixtures.readSubmissions(id), (rows) => rows.map((stored) => JSON.parse(stored.contentJson).tag))
    // The file's submissions by tag, with the id the store gave each.
    const idsByTag = (id: string) =>
      Effect.map(
        Fixtures.pagesOf(id, {}),
        (pages) =>
          new Map(
            pages.flatMap((page) =>
              page.entries.map((_, i) => [String(JSON.parse(page.entries[i] as string).content.tag), page.ids[i]])
            )
          )
      )
    const counter = (id: string) =>
      Effect.map(
        Fixtures.findFile("k1", id),
        Option.map((found) => found.SubmissionCounter)
      )
    // Every way a file's content leaves storage: joined pages in both forms, and both export formats.
    const everything = (id: string) =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        const { readJoined } = EncodedPages.of(files)
        const joined = yield* Effect.forEach(["stored", "withId"] as const, (form) =>
          Effect.map(readJoined(Fixtures.fileId(id), {}, form), EncodedPages.joinedText)
        )
        const exported = yield* Effect.forEach(["csv", "ndjson"] as const, (format) =>
          Effect.flatMap(
            ExportSubmissions.exportFile(files, {
              fileId: Fixtures.fileId(id),
              format,
              since: undefined,
              until: undefined
            }),
            (reply) => Effect.map(Stream.runCollect(ExportEncoder.encode(reply)), (chunks) => Chunk.join(chunks, ""))
          )
        )
        return [...joined, ...exported].join("\n")
      })

    it.effect("erases submissions by id, lowers the counter and leaves them in no read or export", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(base)
        const ids = yield* idsByTag("f1")
        const summary = yield* erase("f1", byIds(ids.get("t1") as string, ids.get("t3") as string))
        // Reply order: t3 is earlier than t1.
        expect(summary).toEqual({
          fileId: "f1",
          ids: [ids.get("t3"), ids.get("t1")],
          submissionCounter: 3,
          visitCounter: 0
        })
        expect(yield* tags("f1")).toEqual(["t4", "t2", "t0"])
        expect(yield* counter("f1")).toEqual(Option.some(3))
        const text = yield* everything("f1")
        expect(text).not.toContain("bob@example.com")
        expect(text).not.toContain("cy@example.com")
        expect(text).toContain("ann@example.com")
        expect(yield* tags("f2")).toEqual(["t5"])
      }).pipe(withStorage())
    )

    it.effect("erases by content: one match, several, and only where every match holds", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(base)
        const one = yield* erase("f1", where(["email", "bob@example.com"]))
        expect(one.ids.length).toBe(1)
        expect(yield* tags("f1")).toEqual(["t4", "t3", "t2", "t0"])
        const both = yield* erase("f1", where(["email", "ann@example.com"], ["list", "news"]))
        expect(both.ids.length).toBe(2)
        expect(both.submissionCounter).toBe(2)
        expect(yield* tags("f1")).toEqual(["t3", "t2"])
        // Another file's matching submission stays.
        expect(yield* tags("f2")).toEqual(["t5"])
        const text = yield* everything("f1")
        expect(text).not.toContain("bob@example.com")
        expect(text).toContain("ann@example.com")
      }).pipe(withStorage())
    )

    it.effect("a name and value match exactly: no prefix, no other name, no other case", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: [
            Fixtures.file({
              id: "f1",
              userId: "u1",
              submissions: [
                { createdDate: at(0), content: { tag: "a", 'we"ird.na$me': "Ann" } },
                { createdDate: at(1), content: { tag: "b", 'we"ird.na$me': "ann" } },
                { createdDate: at(2), content: { tag: "c", 'we"ird.na$me': "Ann " } },
                { createdDate: at(3), content: { tag: "d", other: "Ann" } }
              ]
            })
          ]
        })
        const erased = yield* erase("f1", where(['we"ird.na$me', "Ann"]))
        expect(erased.ids.length).toBe(1)
        expect(yield* tags("f1")).toEqual(["b", "c", "d"])
      }).pipe(withStorage())
    )

    it.effect("erasing none succeeds and writes nothing", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(base)
        const summary = yield* erase("f1", where(["email", "nobody@example.com"]))
        expect(summary).toEqual({ fileId: "f1", ids: [], submissionCounter: 5, visitCounter: 0 })
        expect(yield* tags("f1")).toEqual(["t4", "t3", "t2", "t1", "t0"])
      }).pipe(withStorage())
    )

    it.effect("refuses an unknown file, an unknown id and another file's id, and writes nothing", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(base)
        const ids = yield* idsByTag("f1")
        const other = (yield* idsByTag("f2")).get("t5") as string
        expect(yield* Effect.flip(erase("nope", where(["email", "ann@example.com"])))).toEqual(
          new Erasure.UnknownFile({ fileId: "nope" })
        )
        const refused = yield* Effect.flip(erase("f1", byIds(ids.get("t0") as string, other, "sub_unknown")))
        expect(refused).toEqual(
          new Erasure.SubmissionsNotInFile({ fileId: "f1", unknown: ["sub_unknown"], elsewhere: [other] })
        )
        expect(refused.message).toContain(other)
        expect(yield* tags("f1")).toEqual(["t4", "t3", "t2", "t1", "t0"])
        expect(yield* tags("f2")).toEqual(["t5"])
        expect(yield* counter("f1")).toEqual(Option.some(5))
        expect(yield* counter("f2")).toEqual(Option.some(1))
        // An id erased once names no submission after.
        yield* erase("f1", byIds(ids.get("t0") as string))
        expect(yield* Effect.flip(erase("f1", byIds(ids.get("t0") as string)))).toEqual(
          new Erasure.SubmissionsNotInFile({ fileId: "f1", unknown: [ids.get("t0") as string], elsewhere: [] })
        )
      }).pipe(withStorage())
    )

    it.effect("a user whose file had erasures is removed with all of it", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(base)
        yield* erase("f1", where(["email", "ann@example.com"]))
        const store = yield* OperatorStore.OperatorStore
        expect(yield* store.removeUser(Fixtures.userId("u1"))).toEqual({
          apiKeys: 1,
          files: 2,
          submissions: 3,
          webhooks: 0
        })
      }).pipe(withStorage())
    )

    it.effect("erases across pages and batches, and appends after it count on from the lowered counter", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: [
            Fixtures.file({
              id: "f1",
              userId: "u1",
              submissions: Array.from({ length: 1200 }, (_, i) =>
                row(i, i % 2 === 0 ? "even@example.com" : "odd@example.com")
              )
            })
          ]
        })
        const summary = yield* erase("f1", where(["email", "even@example.com"]))
        expect(summary.ids.length).toBe(600)
        expect(new Set(summary.ids).size).toBe(600)
        yield* Fixtures.appendDocument({ files: [{ id: "f1", submissions: [row(5000, "new@example.com")] }] })
        expect(yield* counter("f1")).toEqual(Option.some(601))
        const rows = yield* Fixtures.readSubmissions("f1")
        expect(rows.length).toBe(601)
        expect(rows.filter((stored) => stored.contentJson.includes("even@")).length).toBe(0)
      }).pipe(withStorage(250))
    )
  })
}
