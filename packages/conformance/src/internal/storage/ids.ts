/**
 * The `ids` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { EncodedPages, FileRepository, SubmissionId } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Fixtures from "./fixtures.js"

/**
 * Submission ids: on every page, unique across files, the same on every read; joined pages and NDJSON lines
 * with them.
 *
 * @internal
 */
export const ids = (withStorage: Fixtures.WithStorage): void => {
  describe("FileRepository: submission ids", () => {
    // Ties among them, so pages break inside them.
    const tagged = (tag: string, count: number, second = (i: number) => Math.floor(i / 2)) =>
      Array.from({ length: count }, (_, i) => ({
        createdDate: Fixtures.at(Fixtures.JAN_1 + second(i) * 1000),
        content: { tag: `${tag}${i}` }
      }))
    const isId = Schema.is(SubmissionId.SubmissionId)
    // Each submission's tag by its id, as pages of `range` pair them.
    const pairs = (id: string, range: FileRepository.SubmissionRange = {}) =>
      Effect.map(Fixtures.pagesOf(id, range), (pages) =>
        pages.flatMap((page) => {
          expect(page.ids).toHaveLength(page.entries.length)
          return page.entries.map((entry, i) => [page.ids[i], JSON.parse(entry).content.tag] as const)
        })
      )

    it.effect("gives every submission an id, unique across files, the same on every read and page size", () =>
      Effect.gen(function* () {
        yield* Fixtures.importFiles({ f1: tagged("a", 7), f2: tagged("b", 4), f3: [] })
        yield* Fixtures.appendTo(
          "f1",
          tagged("c", 3, (i) => i - 5)
        )
        yield* Fixtures.appendTo("f2", tagged("d", 2))
        const f1 = yield* pairs("f1")
        const f2 = yield* pairs("f2")
        expect(f1).toHaveLength(10)
        expect(f2).toHaveLength(6)
        const all = [...f1, ...f2].map(([id]) => id)
        expect(all.every(isId)).toBe(true)
        expect(new Set(all).size).toBe(all.length)
        // Read again, in pages of other sizes: each submission keeps its id.
        for (const limit of [1, 2, 4]) {
          expect(yield* pairs("f1", { limit })).toEqual(f1)
          expect(yield* pairs("f2", { limit })).toEqual(f2)
        }
        // A window of the file, the end of its reply order: the same ids for the same submissions.
        const windowed = yield* pairs("f1", { since: Fixtures.JAN_1 + 2000, limit: 2 })
        expect(windowed.length).toBeGreaterThan(0)
        expect(windowed.length).toBeLessThan(f1.length)
        expect(windowed).toEqual(f1.slice(f1.length - windowed.length))
        expect(yield* pairs("f3")).toEqual([])
      }).pipe(withStorage(3))
    )

    it.effect("a joined page with ids is each entry of the same page with its id first, in every page size", () =>
      Effect.gen(function* () {
        yield* Fixtures.importFiles({ f1: tagged("a", 17) })
        yield* Fixtures.appendTo(
          "f1",
          tagged("b", 5, (i) => 3 * i)
        )
        const files = yield* FileRepository.FileRepository
        const { readJoined } = EncodedPages.of(files)
        const found = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        for (const limit of [1, 2, 5]) {
          const range = { limit, upTo: found.readPoint }
          const pages = yield* Fixtures.pagesOf("f1", range)
          for (const [index, page] of pages.entries()) {
            const after = index === 0 ? undefined : pages[index - 1]?.next
            expect(Fixtures.asText(yield* readJoined(Fixtures.fileId("f1"), { ...range, after }, "withId"))).toEqual(
              Fixtures.asText(EncodedPages.join(page, "withId"))
            )
          }
        }
        // Without a limit joined pages may be longer: the same entries with their ids, in the same order.
        const pages = yield* Fixtures.pagesOf("f1", { upTo: found.readPoint })
        const texts: Array<string> = []
        let after: string | undefined
        for (;;) {
          const page = yield* readJoined(Fixtures.fileId("f1"), { after, upTo: found.readPoint }, "withId")
          texts.push(EncodedPages.joinedText(page))
          if (!page.hasMore) break
          after = page.next
        }
        const expected = pages.flatMap((page) => page.entries.map((_, i) => Fixtures.withId(page, i)))
        expect(texts.length).toBeGreaterThan(1)
        expect(texts.filter((text) => text !== "").join(",")).toBe(expected.join(","))
        // Each parses to the submission with its id first.
        expect(Object.keys(JSON.parse(`[${expected.join(",")}]`)[0])).toEqual(["id", "createdDate", "content"])
      }).pipe(withStorage(3))
    )

    it.effect("an NDJSON page's lines are each submission with its id first; a CSV page's rows have no id", () =>
      Effect.gen(function* () {
        yield* Fixtures.importFiles({ f1: tagged("a", 8) })
        const files = yield* FileRepository.FileRepository
        const { readExportRows } = EncodedPages.of(files)
        const found = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        const pages = yield* Fixtures.pagesOf("f1", { limit: 3, upTo: found.readPoint })
        for (const [index, page] of pages.entries()) {
          const range = { limit: 3, upTo: found.readPoint, after: index === 0 ? undefined : pages[index - 1]?.next }
          const lines = yield* readExportRows(Fixtures.fileId("f1"), range, { format: "ndjson" })
          expect(EncodedPages.joinedText(lines)).toBe(
            page.entries.map((_, i) => `${Fixtures.withId(page, i)}\n`).join("")
          )
          const rows = yield* readExportRows(Fixtures.fileId("f1"), range, { format: "csv", names: ["tag"] })
          for (const id of page.ids) expect(EncodedPages.joinedText(rows)).not.toContain(id)
        }
      }).pipe(withStorage(3))
    )
  })
}
