/**
 * The `readPoints` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { FileRepository } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Fixtures from "./fixtures.js"

/**
 * Read points: pages read up to one show the file as found, whatever is appended.
 *
 * @internal
 */
export const readPoints = (withStorage: Fixtures.WithStorage): void => {
  describe("FileRepository: read points", () => {
    const before = Array.from({ length: 30 }, (_, i) => ({
      createdDate: Fixtures.at(Fixtures.JAN_1 + i * 1000),
      content: { n: String(i) }
    }))
    // Before the first, among the rest, tied with one, after the last.
    const appended = [
      { createdDate: Fixtures.at(Fixtures.JAN_1 - 1000), content: { n: "first of all" } },
      { createdDate: Fixtures.at(Fixtures.JAN_1 + 12_500), content: { n: "among" } },
      { createdDate: Fixtures.at(Fixtures.JAN_1 + 20_000), content: { n: "tied" } },
      { createdDate: Fixtures.at(Fixtures.JAN_1 + 99_000), content: { n: "last of all" } }
    ]

    it.effect("pages read up to a read point show the file as found, whatever is appended meanwhile", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        yield* Fixtures.importFiles({ f1: before })
        const found = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        expect(found.SubmissionCounter).toBe(30)
        const first = yield* files.readSubmissions(Fixtures.fileId("f1"), { upTo: found.readPoint })
        yield* Fixtures.appendTo("f1", appended)
        const rest = yield* Fixtures.pagesOf("f1", { after: first.next, upTo: found.readPoint })
        expect(Fixtures.parsed([first, ...rest])).toEqual(Fixtures.stored(before))
        // Without the read point the same pages show the append: the bound is what kept it out.
        expect(Fixtures.parsed([first, ...(yield* Fixtures.pagesOf("f1", { after: first.next }))])).toEqual([
          ...Fixtures.stored(before).slice(0, 3),
          ...Fixtures.stored([...before.slice(3), ...appended.slice(1)])
        ])

        const again = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        expect(again.SubmissionCounter).toBe(34)
        expect(again.readPoint).not.toBe(found.readPoint)
        expect(Fixtures.parsed(yield* Fixtures.pagesOf("f1", { upTo: again.readPoint }))).toEqual(
          Fixtures.stored([...before, ...appended])
        )
      }).pipe(withStorage(3))
    )

    it.effect("a reply written while an append commits is the file before it; the next reply, after it", () =>
      Effect.gen(function* () {
        yield* Fixtures.importFiles({ f1: before })
        const expected = (counter: number, submissions: ReadonlyArray<Fixtures.NewSubmission>) => ({
          name: "File f1",
          creationDate: "2024-01-01T00:00:00.000Z",
          publicAvailability: false,
          SubmissionCounter: counter,
          VisitCounter: 0,
          submissions: Fixtures.stored(submissions).map((row) => ({
            createdDate: row.createdDate,
            content: JSON.parse(row.contentJson)
          }))
        })
        let pieces = 0
        const during = yield* Fixtures.fileDataReply("f1", "k1", () =>
          ++pieces === 1 ? Fixtures.appendTo("f1", appended) : Effect.void
        )
        // Many pages, so the append committed between pages, after the first piece went out.
        expect(pieces).toBeGreaterThan(5)
        expect(during).toEqual(expected(30, before))
        expect(yield* Fixtures.fileDataReply("f1", "k1", () => Effect.void)).toEqual(
          expected(34, [...before, ...appended])
        )
      }).pipe(withStorage(3))
    )
  })
}
