/**
 * The `contentNames` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { FileRepository } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Fixtures from "./fixtures.js"

/**
 * Content names: each file's names once, in first-seen order, as of a read point; and an export's pages, which
 * an adapter may render from what it stored, equal to the core's rendering of the same entries.
 *
 * @internal
 */
export const contentNames = (withStorage: Fixtures.WithStorage): void => {
  describe("FileRepository: content names", () => {
    const dated = (contents: ReadonlyArray<Record<string, string>>, from = 0) =>
      contents.map((content, i) => ({ createdDate: Fixtures.at(Fixtures.JAN_1 + (from + i) * 1000), content }))
    const namesAt = (id: string, readPoint: FileRepository.ReadPoint) =>
      Effect.flatMap(FileRepository.FileRepository, (files) => files.readContentNames(Fixtures.fileId(id), readPoint))
    const names = (id: string) =>
      Effect.flatMap(Fixtures.findFile("k1", id), (found) => namesAt(id, Option.getOrThrow(found).readPoint))

    it.effect("keeps each file's names once, in the order the file first received them, odd names exactly", () =>
      Effect.gen(function* () {
        yield* Fixtures.importFiles({
          f2: dated([{ z: "1" }, { y: "2", z: "3" }]),
          // Reply order is not insertion order here: names follow insertion.
          f1: dated(
            [
              { b: "1", a: "2" },
              { c: "", a: "x" },
              { "7": "n", "": "e" }
            ],
            10
          ).concat(dated([{ createdDate: "d", "a,b": "", "line\nbreak": "", "😀": "", ["__proto__"]: "" }], 0)),
          f3: []
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
        yield* Fixtures.importFiles({ f1: dated([{ a: "1" }]) })
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
        yield* Fixtures.importFiles({ f1: dated([{ a: "1" }]) })
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
        yield* Fixtures.importFiles({ f1: dated([{ a: "1" }]) })
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
}
