/**
 * The `contentNames` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { ExportSubmissions, FileRepository, SubmissionsExport } from "@filedata/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Fixtures from "./fixtures.js"

/**
 * Content names: each file's names once, in first-seen order, as of a read point; and an export's pages, which
 * an adapter may render from what it stored, equal to the core's rendering of the same entries.
 *
 * @internal
 */
export const contentNames = (withStorage: Fixtures.WithStorage): void => {
  describe("FileRepository: content names", () => {
    const users = [{ id: "u1", apiKeys: ["k1"] }]
    const dated = (contents: ReadonlyArray<Record<string, string>>, from = 0) =>
      contents.map((content, i) => ({ createdDate: Fixtures.at(Fixtures.JAN_1 + (from + i) * 1000), content }))
    const namesAt = (id: string, readPoint: FileRepository.ReadPoint) =>
      Effect.flatMap(FileRepository.FileRepository, (files) => files.readContentNames(Fixtures.fileId(id), readPoint))
    const names = (id: string) =>
      Effect.flatMap(Fixtures.findFile("k1", id), (found) => namesAt(id, Option.getOrThrow(found).readPoint))

    it.effect("keeps each file's names once, in the order the file first received them, odd names exactly", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument({
          users,
          files: [
            Fixtures.file({ id: "f2", userId: "u1", submissions: dated([{ z: "1" }, { y: "2", z: "3" }]) }),
            Fixtures.file({
              id: "f1",
              userId: "u1",
              // Reply order is not insertion order here: names follow insertion.
              submissions: dated(
                [
                  { b: "1", a: "2" },
                  { c: "", a: "x" },
                  { "7": "n", "": "e" }
                ],
                10
              ).concat(dated([{ createdDate: "d", "a,b": "", "line\nbreak": "", "😀": "", ["__proto__"]: "" }], 0))
            }),
            Fixtures.file({ id: "f3", userId: "u1" })
          ]
        })
        expect(yield* names("f1")).toEqual([
          "b",
          "a",
          "c",
          "7",
          "",
          "createdDate",
          "a,b",
          "line\nbreak",
          "😀",
          "__proto__"
        ])
        expect(yield* names("f2")).toEqual(["z", "y"])
        expect(yield* names("f3")).toEqual([])
      }).pipe(withStorage(2))
    )

    it.effect("an append adds its new names after the file's, seen only from a read point after it", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument({
          users,
          files: [Fixtures.file({ id: "f1", userId: "u1", submissions: dated([{ a: "1" }]) })]
        })
        const before = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        yield* Fixtures.appendTo("f1", dated([{ b: "2", a: "3" }, { c: "4" }], -5))
        expect(yield* namesAt("f1", before.readPoint)).toEqual(["a"])
        expect(yield* names("f1")).toEqual(["a", "b", "c"])
        yield* Fixtures.appendTo("f1", dated([{ c: "5", d: "6" }]))
        expect(yield* names("f1")).toEqual(["a", "b", "c", "d"])
      }).pipe(withStorage())
    )

    it.effect("names of an append that rolls back never appear, and the next append's follow the file's", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument({
          users,
          files: [Fixtures.file({ id: "f1", userId: "u1", submissions: dated([{ a: "1" }]) })]
        })
        // Refused whole: a file that does not exist.
        const refused = yield* Effect.flip(
          Fixtures.appendDocument({
            files: [
              { id: "f1", submissions: dated([{ ghost: "1", a: "2" }]) },
              { id: "missing", submissions: dated([{ other: "1" }]) }
            ]
          })
        )
        expect(refused._tag).toBe("FixtureInvalid")
        expect(yield* names("f1")).toEqual(["a"])
        yield* Fixtures.appendDocument({ files: [{ id: "f1", submissions: dated([{ b: "1" }, { ghost: "2" }]) }] })
        expect(yield* names("f1")).toEqual(["a", "b", "ghost"])
      }).pipe(withStorage())
    )

    it.effect("findFile finds any file by id with a read point, and nothing for an unknown id", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        yield* Fixtures.importDocument({
          users,
          files: [Fixtures.file({ id: "f1", userId: "u1", submissions: dated([{ a: "1" }]) })]
        })
        const found = Option.getOrThrow(yield* files.findFile(Fixtures.fileId("f1")))
        const viaKey = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        expect(found).toEqual(viaKey)
        expect(yield* files.findFile(Fixtures.fileId("missing"))).toEqual(Option.none())
        yield* Fixtures.appendTo("f1", dated([{ b: "1" }], 1))
        const later = Option.getOrThrow(yield* files.findFile(Fixtures.fileId("f1")))
        expect(later.SubmissionCounter).toBe(2)
        expect(Fixtures.parsed(yield* Fixtures.pagesOf("f1", { upTo: found.readPoint }))).toHaveLength(1)
        expect(Fixtures.parsed(yield* Fixtures.pagesOf("f1", { upTo: later.readPoint }))).toHaveLength(2)
      }).pipe(withStorage())
    )
  })

  describe("FileRepository: export pages", () => {
    // Few names, odd ones among them, so appends bring names in other orders, skip some and add new ones.
    const NAMES = ["a", "b", "createdDate", "", "x,y", "=f", "__proto__", "line\nbreak"]
    const VALUES = ["", "v", "=1+1", '"q"', "a,b", "-2", "é😀", "\r\n"]
    const content = FastCheck.array(
      FastCheck.tuple(FastCheck.constantFrom(...NAMES), FastCheck.constantFrom(...VALUES)),
      { maxLength: 4 }
    ).map((pairs) => JSON.stringify(Object.fromEntries(pairs)))
    const batch = FastCheck.array(FastCheck.tuple(FastCheck.integer({ min: 0, max: 4 }), content), { maxLength: 7 })
    const history = FastCheck.array(batch, { minLength: 1, maxLength: 4 })

    // The body as the core renders it from `readSubmissions` pages: what an adapter's own pages must equal.
    const rendered = (id: string, format: "csv" | "ndjson", since: number | undefined) =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        const found = Option.getOrThrow(yield* files.findFile(Fixtures.fileId(id)))
        const names = yield* files.readContentNames(Fixtures.fileId(id), found.readPoint)
        const rows: FileRepository.ExportRows = format === "csv" ? { format, names } : { format }
        const pages = yield* Fixtures.pagesOf(id, { since, upTo: found.readPoint })
        const body = pages.map((page) => FileRepository.joinedText(SubmissionsExport.renderPage(rows, page))).join("")
        return format === "csv" ? SubmissionsExport.csvHeader(names) + body : body
      })
    const exported = (id: string, format: "csv" | "ndjson", since: number | undefined) =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        const reply = yield* ExportSubmissions.exportFile(files, {
          fileId: Fixtures.fileId(id),
          format,
          since,
          until: undefined
        })
        return Chunk.join(yield* Stream.runCollect(SubmissionsExport.encode(reply)), "")
      })

    it.effect("each page's CSV rows and NDJSON lines are the core's rendering of its entries, after appends", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument({ users: [{ id: "u1", apiKeys: ["k1"] }], files: [] })
        const cases = FastCheck.sample(history, { numRuns: 12, seed: 30 })
        for (const [n, batches] of cases.entries()) {
          const id = `f${n}`
          const dated = (rows: ReadonlyArray<readonly [number, string]>) =>
            rows.map(([second, json]) => ({
              createdDate: Fixtures.at(Fixtures.JAN_1 + second * 1000),
              content: JSON.parse(json)
            }))
          const [first, ...appends] = batches
          yield* Fixtures.importDocument({
            users: [],
            files: [Fixtures.file({ id, userId: "u1", submissions: dated(first ?? []) })]
          })
          for (const appended of appends) yield* Fixtures.appendTo(id, dated(appended))
          for (const format of ["csv", "ndjson"] as const) {
            for (const since of [undefined, Fixtures.JAN_1 + 2000]) {
              expect(yield* exported(id, format, since)).toBe(yield* rendered(id, format, since))
            }
          }
        }
      }).pipe(withStorage(3))
    )
  })
}
