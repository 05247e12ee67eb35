/**
 * The `ranges` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { EncodedPages, FileRepository } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Fixtures from "./fixtures.js"

/**
 * Pages of a read: limits, windows, positions, joined pages and incremental reads.
 *
 * @internal
 */
export const ranges = (withStorage: Fixtures.WithStorage): void => {
  describe("FileRepository: ranges", () => {
    // Three submissions a second, so every page of a few holds ties and some pages break inside them.
    const tied = (count: number, tag = "") =>
      Array.from({ length: count }, (_, i) => ({
        createdDate: Fixtures.at(Fixtures.JAN_1 + Math.floor(i / 3) * 1000),
        content: { i: `${tag}${i}` }
      }))

    // Rows of two files on few instants, so windows and pages fall on ties.
    type WindowRow = { readonly file: string; readonly createdDate: string; readonly content: Record<string, string> }
    const windowRows: FastCheck.Arbitrary<Array<WindowRow>> = FastCheck.array(
      FastCheck.record({
        file: FastCheck.constantFrom("f1", "f2"),
        createdDate: FastCheck.constantFrom(...Fixtures.INSTANTS),
        content: FastCheck.dictionary(FastCheck.string(), FastCheck.string(), { maxKeys: 2 })
      }),
      { maxLength: 24 }
    )
    // A read of a window of those rows in small pages: bounds on the rows' own instants and between them.
    const windowRead = {
      limit: FastCheck.option(FastCheck.integer({ min: 1, max: 4 }), { nil: undefined }),
      since: FastCheck.option(FastCheck.constantFrom(...Fixtures.BOUNDS), { nil: undefined }),
      until: FastCheck.option(FastCheck.constantFrom(...Fixtures.BOUNDS), { nil: undefined }),
      rows: windowRows
    }
    // Imports the rows into f1 and f2 of u1; gives each file's submissions as imported.
    const importRows = (rows: ReadonlyArray<WindowRow>) =>
      Effect.gen(function* () {
        const submissionsOf = (id: string) =>
          rows.filter((row) => row.file === id).map(({ content, createdDate }) => ({ createdDate, content }))
        yield* Fixtures.importFiles({ f1: submissionsOf("f1"), f2: submissionsOf("f2") })
        return submissionsOf
      })

    // Joined texts read back as one JSON array, and the submissions as that array must show them.
    const joinedRows = (texts: ReadonlyArray<string>) =>
      JSON.parse(`[${texts.filter((text) => text !== "").join(",")}]`)
    const asReplied = (submissions: ReadonlyArray<Fixtures.NewSubmission>) =>
      Fixtures.stored(submissions).map((row) => ({
        createdDate: row.createdDate,
        content: JSON.parse(row.contentJson)
      }))

    it.effect("pages through a file with any limit: full pages but the last, hasMore exactly when more follow", () =>
      Effect.gen(function* () {
        yield* Fixtures.importFiles({ f0: [], f6: tied(6), f7: tied(7) })
        for (const [id, count] of [
          ["f0", 0],
          ["f6", 6],
          ["f7", 7]
        ] as const) {
          for (const limit of [1, 2, undefined, 10_000]) {
            const pages = yield* Fixtures.pagesOf(id, { limit })
            expect(pages.map((page) => page.entries.length)).toEqual(Fixtures.pageSizes(count, limit ?? 3))
            expect(pages.map((page) => page.hasMore)).toEqual(pages.map((_, i) => i < pages.length - 1))
            expect(Fixtures.parsed(pages)).toEqual(Fixtures.stored(tied(count)))
          }
        }
      }).pipe(withStorage(3))
    )

    it.effect.prop(
      "reads the window since <= createdDate < until in bounded pages, ties in insertion order, nothing twice",
      {
        ...windowRead
      },
      ({ limit, rows, since, until }) =>
        Effect.gen(function* () {
          const submissionsOf = yield* importRows(rows)
          const inWindow = (row: Fixtures.NewSubmission) =>
            (since === undefined || Date.parse(row.createdDate) >= since) &&
            (until === undefined || Date.parse(row.createdDate) < until)
          for (const id of ["f1", "f2"]) {
            const expected = Fixtures.stored(submissionsOf(id).filter(inWindow))
            const pages = yield* Fixtures.pagesOf(id, { since, until, limit })
            expect(Fixtures.parsed(pages)).toEqual(expected)
            expect(pages.map((page) => page.entries.length)).toEqual(Fixtures.pageSizes(expected.length, limit ?? 3))
            expect(pages.map((page) => page.hasMore)).toEqual(pages.map((_, i) => i < pages.length - 1))
            // Where the read ended, the window holds nothing more.
            const files = yield* FileRepository.FileRepository
            const last = pages[pages.length - 1] as FileRepository.SubmissionPage
            const beyond = yield* files.readSubmissions(Fixtures.fileId(id), { since, until, limit, after: last.next })
            expect(beyond).toEqual({ entries: [], ids: [], next: last.next, hasMore: false })
          }
        }).pipe(withStorage(3)),
      { fastCheck: { numRuns: 25 } }
    )

    it.effect("a bound on a createdDate: since takes it in, until leaves it out; empty windows are empty", () =>
      Effect.gen(function* () {
        const t = (second: number) => Fixtures.JAN_1 + second * 1000
        const rows = [
          { createdDate: Fixtures.at(t(1)), content: { n: "1" } },
          { createdDate: Fixtures.at(t(2)), content: { n: "2a" } },
          { createdDate: Fixtures.at(t(2)), content: { n: "2b" } },
          { createdDate: Fixtures.at(t(3)), content: { n: "3" } }
        ]
        yield* Fixtures.importFiles({ f1: rows })
        const read = (range: FileRepository.SubmissionRange) =>
          Effect.map(Fixtures.pagesOf("f1", range), (pages) =>
            Fixtures.parsed(pages).map((row) => JSON.parse(row.contentJson).n)
          )
        expect(yield* read({ since: t(2) })).toEqual(["2a", "2b", "3"])
        expect(yield* read({ until: t(2) })).toEqual(["1"])
        expect(yield* read({ since: t(2), until: t(3) })).toEqual(["2a", "2b"])
        expect(yield* read({ since: t(2), until: t(3), limit: 1 })).toEqual(["2a", "2b"])
        expect(yield* read({ since: t(2) + 1, until: t(3) + 1 })).toEqual(["3"])
        for (const empty of [
          { since: t(2), until: t(2) },
          { until: t(1) },
          { since: t(3) + 1 },
          { since: t(3), until: t(1) }
        ]) {
          expect(yield* read(empty)).toEqual([])
        }
      }).pipe(withStorage(3))
    )

    it.effect("an empty page's next is where its range started; what is appended later follows it", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        yield* Fixtures.importFiles({ f0: [], f1: tied(4) })
        // An empty file, read from its start and from what the first read handed out.
        const empty = yield* files.readSubmissions(Fixtures.fileId("f0"), {})
        expect(empty).toMatchObject({ entries: [], hasMore: false })
        expect(yield* files.readSubmissions(Fixtures.fileId("f0"), { after: empty.next })).toEqual(empty)
        // A window that holds nothing yet starts where the window does.
        const since = Fixtures.JAN_1 + 60_000
        const quiet = yield* files.readSubmissions(Fixtures.fileId("f1"), { since })
        expect(quiet).toMatchObject({ entries: [], hasMore: false })
        expect(yield* files.readSubmissions(Fixtures.fileId("f1"), { since, after: quiet.next })).toEqual(quiet)
        // With an `after`, an empty page hands that position back as it was given.
        const [first] = yield* Fixtures.pagesOf("f1", { limit: 1 })
        const after = (first as FileRepository.SubmissionPage).next
        expect(yield* files.readSubmissions(Fixtures.fileId("f1"), { after, until: Fixtures.JAN_1 })).toEqual({
          entries: [],
          ids: [],
          next: after,
          hasMore: false
        })

        const later = [
          { createdDate: Fixtures.at(since + 5), content: { n: "later" } },
          { createdDate: Fixtures.at(since), content: { n: "on the bound" } }
        ]
        yield* Fixtures.appendTo("f0", later)
        yield* Fixtures.appendTo("f1", later)
        expect(Fixtures.parsed(yield* Fixtures.pagesOf("f0", { after: empty.next }))).toEqual(Fixtures.stored(later))
        expect(Fixtures.parsed(yield* Fixtures.pagesOf("f1", { since, after: quiet.next }))).toEqual(
          Fixtures.stored(later)
        )
      }).pipe(withStorage(3))
    )

    it.effect("a read that asks for no end position reads the same pages; only the last may leave its next out", () =>
      Effect.gen(function* () {
        const submissions = tied(7)
        yield* Fixtures.importFiles({ f0: [], f1: submissions })
        for (const limit of [undefined, 1, 2, 3, 7, 8]) {
          const asked = yield* Fixtures.pagesOf("f1", { limit })
          const unasked = yield* Fixtures.pagesOf("f1", { limit, endPosition: false })
          expect(Fixtures.parsed(unasked)).toEqual(Fixtures.stored(submissions))
          expect(unasked.map((page) => page.hasMore)).toEqual(asked.map((page) => page.hasMore))
          for (const [index, page] of unasked.entries()) {
            const same = asked[index] as FileRepository.SubmissionPage
            expect(page.entries).toEqual(same.entries)
            // Where a page is followed by another, its next is given and the same as when asked for.
            if (page.next !== undefined || page.hasMore) expect(page.next).toEqual(same.next)
          }
          // Asked for, the last page's next is always given.
          expect(asked.every((page) => typeof page.next === "string")).toBe(true)
        }
        const files = yield* FileRepository.FileRepository
        const empty = yield* files.readSubmissions(Fixtures.fileId("f0"), { endPosition: false })
        expect(empty).toMatchObject({ entries: [], hasMore: false })
      }).pipe(withStorage(3))
    )

    it.effect.prop(
      "a joined page is the same page's entries joined, with the same count, next and hasMore",
      {
        ...windowRead,
        endPosition: FastCheck.option(FastCheck.boolean(), { nil: undefined })
      },
      ({ endPosition, limit, rows, since, until }) =>
        Effect.gen(function* () {
          yield* importRows(rows)
          const files = yield* FileRepository.FileRepository
          const { readJoined } = EncodedPages.of(files)
          for (const id of ["f1", "f2", "f3"]) {
            const range = { since, until, limit, endPosition }
            const pages = yield* Fixtures.pagesOf(id, range)
            if (limit === undefined) {
              // Without a limit, joined pages may be longer, so their boundaries differ: the same entries in
              // the same order, the same end.
              const joined = yield* Fixtures.joinedPagesOf(id, range)
              const text = (texts: ReadonlyArray<string>) => texts.filter((one) => one !== "").join(",")
              expect(text(joined.map(EncodedPages.joinedText))).toEqual(
                text(pages.map((page) => page.entries.join(",")))
              )
              expect(joined.reduce((sum, page) => sum + page.count, 0)).toBe(Fixtures.parsed(pages).length)
              expect(joined.map((page) => page.hasMore)).toEqual(joined.map((_, i) => i < joined.length - 1))
              continue
            }
            // Each page again, joined, from where its read started; and past the last one, when it says where.
            for (const [index, page] of pages.entries()) {
              const after = index === 0 ? undefined : pages[index - 1]?.next
              expect(Fixtures.asText(yield* readJoined(Fixtures.fileId(id), { ...range, after }, "stored"))).toEqual(
                Fixtures.asText(EncodedPages.join(page))
              )
            }
            const after = pages[pages.length - 1]?.next
            if (after !== undefined) {
              expect(Fixtures.asText(yield* readJoined(Fixtures.fileId(id), { ...range, after }, "stored"))).toEqual(
                Fixtures.asText(
                  EncodedPages.join(yield* files.readSubmissions(Fixtures.fileId(id), { ...range, after }))
                )
              )
            }
          }
          expect(Fixtures.asText(yield* readJoined(Fixtures.fileId("f1"), { after: "made-up" }, "stored"))).toEqual(
            Fixtures.asText(
              EncodedPages.join(yield* files.readSubmissions(Fixtures.fileId("f1"), { after: "made-up" }))
            )
          )
        }).pipe(withStorage(3)),
      { fastCheck: { numRuns: 25 } }
    )

    it.effect("a file read in joined pages ends each page exactly, ties at a page's end or not", () =>
      Effect.gen(function* () {
        // Distinct instants but for two ties. Pages of 3 then 12 (SQLite's joined pages with pages of 3 rows) end
        // at the 15th submission, inside a tie; at the 27th, alone at its instant; at the 39th, the end of a tie.
        const seconds = [
          ...Array.from({ length: 15 }, (_, i) => i),
          14,
          ...Array.from({ length: 8 }, (_, i) => 16 + i),
          25,
          26,
          27,
          ...Array.from({ length: 10 }, (_, i) => 28 + i),
          38,
          38
        ]
        const submissions = seconds.map((second, i) => ({
          createdDate: Fixtures.at(Fixtures.JAN_1 + second * 1000),
          content: { i: String(i) }
        }))
        yield* Fixtures.importFiles({ f1: submissions })
        const found = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        for (const endPosition of [false, undefined]) {
          const pages = yield* Fixtures.joinedPagesOf("f1", { upTo: found.readPoint, endPosition })
          expect(pages.map((page) => page.hasMore)).toEqual(pages.map((_, i) => i < pages.length - 1))
          expect(joinedRows(pages.map(EncodedPages.joinedText))).toEqual(asReplied(submissions))
          // Each page's next is the position of its last submission: reading on from it gives the rest.
          let read = 0
          for (const page of pages.slice(0, -1)) {
            read += page.count
            const rest = yield* Fixtures.pagesOf("f1", { after: page.next, upTo: found.readPoint })
            expect(Fixtures.parsed(rest)).toEqual(Fixtures.stored(submissions).slice(read))
          }
        }
      }).pipe(withStorage(3))
    )

    it.effect("joins a page in reply order, however the rows were inserted", () =>
      Effect.gen(function* () {
        // Inserted in an order unlike the reply's, with ties, over several full pages.
        const submissions = Array.from({ length: 600 }, (_, i) => ({
          createdDate: Fixtures.at(Fixtures.JAN_1 + ((i * 37) % 101) * 1000),
          content: { i: String(i) }
        }))
        yield* Fixtures.importFiles({ f1: submissions })
        const files = yield* FileRepository.FileRepository
        const { readJoined } = EncodedPages.of(files)
        const found = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        const texts: Array<string> = []
        let after: string | undefined
        for (;;) {
          const page = yield* readJoined(
            Fixtures.fileId("f1"),
            { after, upTo: found.readPoint, endPosition: false },
            "stored"
          )
          if (page.count > 0) texts.push(EncodedPages.joinedText(page))
          if (!page.hasMore) break
          after = page.next
        }
        // Pages after the first too, which an adapter may join differently.
        expect(texts.length).toBeGreaterThanOrEqual(3)
        expect(joinedRows(texts)).toEqual(asReplied(submissions))
      }).pipe(withStorage(100))
    )

    it.effect("a sync continues after its last next with what was appended at or after that createdDate", () =>
      Effect.gen(function* () {
        const before = tied(7)
        yield* Fixtures.importFiles({ f1: before })
        const synced = yield* Fixtures.pagesOf("f1", { limit: 2 })
        expect(Fixtures.parsed(synced)).toEqual(Fixtures.stored(before))
        const last = Date.parse((before[6] as Fixtures.NewSubmission).createdDate)
        yield* Fixtures.appendTo("f1", [
          { createdDate: Fixtures.at(last + 1000), content: { i: "later" } },
          // Before the cursor: a sync that went past it does not see it again.
          { createdDate: Fixtures.at(last - 1), content: { i: "earlier" } },
          { createdDate: Fixtures.at(last), content: { i: "tied with the last" } },
          { createdDate: Fixtures.at(last + 1), content: { i: "just after" } }
        ])
        const next = (synced[synced.length - 1] as FileRepository.SubmissionPage).next
        const resumed = yield* Fixtures.pagesOf("f1", { limit: 2, after: next })
        expect(Fixtures.parsed(resumed).map((row) => JSON.parse(row.contentJson).i)).toEqual([
          "tied with the last",
          "just after",
          "later"
        ])
        expect(resumed.map((page) => page.hasMore)).toEqual([true, false])
      }).pipe(withStorage(3))
    )

    it.effect("a position of another file's range reads this file's submissions only, and a made-up one none", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        // Interleaved instants, so the other file's positions fall among this file's submissions.
        const mine = tied(9, "mine-")
        const theirs = Array.from({ length: 9 }, (_, i) => ({
          createdDate: Fixtures.at(Fixtures.JAN_1 + i * 500),
          content: { i: `theirs-${i}` }
        }))
        yield* Fixtures.importFiles({ mine, theirs })
        const expected = Fixtures.stored(mine)
        for (const page of yield* Fixtures.pagesOf("theirs", { limit: 1 })) {
          const read = Fixtures.parsed(yield* Fixtures.pagesOf("mine", { after: page.next }))
          expect(read).toEqual(expected.slice(expected.length - read.length))
        }
        for (const made of ["", "x", "1", "1:2:3", "-0:1", "01:1", "1:01", " 1:1", "1e3:1", "1:-1", "1:1.5"]) {
          expect(yield* files.readSubmissions(Fixtures.fileId("mine"), { after: made })).toEqual({
            entries: [],
            ids: [],
            next: made,
            hasMore: false
          })
        }
        for (const outOfRange of ["99999999999999999:1", "253402300800000:1", "1:9223372036854775808"]) {
          expect(yield* files.readSubmissions(Fixtures.fileId("mine"), { after: outOfRange })).toMatchObject({
            entries: []
          })
        }
      }).pipe(withStorage(3))
    )
  })
}
