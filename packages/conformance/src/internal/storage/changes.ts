/**
 * The `changes` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { EncodedPages, FileRepository, OperatorStore, type SubmissionId } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Fixtures from "./fixtures.js"

/** A change as the cases compare them: its type, id and the tag of its content (none for an erasure). */
type Seen = readonly [type: FileRepository.Change["type"], id: string, tag: string | undefined]

const seen = (change: FileRepository.Change): Seen =>
  change.type === "submission.created"
    ? [change.type, change.id, JSON.parse(change.entry).content.tag]
    : [change.type, change.id, undefined]

/** The pages of a feed read after each `next` in turn, from `range.after`, until one says no more follow. */
const changePagesOf = (id: string, range: FileRepository.ChangeRange) =>
  Effect.gen(function* () {
    const files = yield* FileRepository.FileRepository
    const pages: Array<FileRepository.ChangePage> = []
    let after = range.after
    for (;;) {
      const page = yield* files.readChanges(Fixtures.fileId(id), { ...range, after })
      pages.push(page)
      if (!page.hasMore) return pages
      if (pages.length > 1000) throw new Error("a feed that never ends")
      after = page.next
    }
  })

/** Every change of the file's feed in `range`, read in pages. */
const changesOf = (id: string, range: FileRepository.ChangeRange = {}) =>
  Effect.map(changePagesOf(id, range), (pages) => pages.flatMap((page) => page.changes.map(seen)))

/**
 * The change feed: a file's stored submissions in commit order whatever their createdDate, paged after each
 * `next` exactly once, bounded by a read point, only the file's own. (Erased changes: the `erasures` section.)
 *
 * @internal
 */
export const changes = (withStorage: Fixtures.WithStorage): void => {
  describe("FileRepository: change feed", () => {
    const tagged = (tag: string, seconds: ReadonlyArray<number>) =>
      seconds.map((second, i) => ({
        createdDate: Fixtures.at(Fixtures.JAN_1 + second * 1000),
        content: { tag: `${tag}${i}` }
      }))
    const tags = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`)
    const created = (list: ReadonlyArray<Seen>) => list.map(([type, , tag]) => [type, tag])
    // Each submission's id by its tag, as the file's pages give them.
    const idsByTag = (id: string) =>
      Effect.map(
        Fixtures.pagesOf(id, {}),
        (pages) =>
          new Map(pages.flatMap((page) => page.entries.map((entry, i) => [JSON.parse(entry).content.tag, page.ids[i]])))
      )

    it.effect("tells a file's submissions in the order they were stored, a backdated append after the rest", () =>
      Effect.gen(function* () {
        // Imported out of createdDate order; appended before, among and after what is there.
        yield* Fixtures.importFiles({ f1: tagged("a", [5, 1, 3, 3]), f2: tagged("b", [2]) })
        yield* Fixtures.appendTo("f1", tagged("c", [0, 9, 3]))
        yield* Fixtures.appendTo("f2", tagged("d", [1]))
        yield* Fixtures.appendTo("f1", tagged("e", [-100]))
        const feed = yield* changesOf("f1")
        expect(created(feed)).toEqual(
          [...tags("a", 4), ...tags("c", 3), "e0"].map((tag) => ["submission.created", tag])
        )
        expect(created(yield* changesOf("f2"))).toEqual([
          ["submission.created", "b0"],
          ["submission.created", "d0"]
        ])
        // The ids and entries of the pages.
        const ids = yield* idsByTag("f1")
        expect(feed.map(([, id, tag]) => [tag, id])).toEqual(feed.map(([, , tag]) => [tag, ids.get(tag)]))
        const files = yield* FileRepository.FileRepository
        const {
          changes: [first]
        } = yield* files.readChanges(Fixtures.fileId("f1"), { limit: 1 })
        const [page] = yield* Fixtures.pagesOf("f1", { since: Fixtures.JAN_1 + 5000, until: Fixtures.JAN_1 + 5001 })
        expect(first).toEqual({ type: "submission.created", id: page?.ids[0], entry: page?.entries[0] })
        // A reader that had read up to the first append's end sees the backdated one next.
        const [untilC] = yield* changePagesOf("f1", { limit: 7 })
        expect(untilC?.changes.map(seen).at(-1)?.[2]).toBe("c2")
        expect(created(yield* changesOf("f1", { after: untilC?.next }))).toEqual([["submission.created", "e0"]])
      }).pipe(withStorage(3))
    )

    it.effect(
      "pages after each next see every change once, full pages but the last, hasMore exactly when more follow",
      () =>
        Effect.gen(function* () {
          yield* Fixtures.importFiles({ f1: tagged("a", [3, 2, 1, 0, 4, 4, 4]), f2: tagged("x", [1, 2]) })
          yield* Fixtures.appendTo("f1", tagged("b", [1, 1]))
          yield* Fixtures.appendTo("f2", tagged("y", [1]))
          yield* Fixtures.appendTo("f1", tagged("c", [0]))
          const whole = yield* changesOf("f1", { limit: 10_000 })
          expect(whole).toHaveLength(10)
          for (const limit of [1, 2, 3, 4, undefined]) {
            const pages = yield* changePagesOf("f1", { limit })
            expect(pages.flatMap((page) => page.changes.map(seen))).toEqual(whole)
            expect(pages.map((page) => page.changes.length)).toEqual(Fixtures.pageSizes(10, limit ?? 3))
            expect(pages.map((page) => page.hasMore)).toEqual(pages.map((_, i) => i < pages.length - 1))
            // Past the last page: nothing, and the same position handed back.
            const last = pages[pages.length - 1] as FileRepository.ChangePage
            const files = yield* FileRepository.FileRepository
            expect(yield* files.readChanges(Fixtures.fileId("f1"), { limit, after: last.next })).toEqual({
              changes: [],
              next: last.next,
              hasMore: false
            })
          }
        }).pipe(withStorage(3))
    )

    it.effect("an empty page's next is where the feed stood: what is stored later follows it", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        yield* Fixtures.importFiles({ f0: [], f1: tagged("a", [1]) })
        const empty = yield* files.readChanges(Fixtures.fileId("f0"), {})
        expect(empty).toMatchObject({ changes: [], hasMore: false })
        const unknown = yield* files.readChanges(Fixtures.fileId("no-such-file"), {})
        expect(unknown).toMatchObject({ changes: [], hasMore: false })
        const [read] = yield* changePagesOf("f1", {})
        yield* Fixtures.appendTo("f0", tagged("b", [0]))
        yield* Fixtures.appendTo("f1", tagged("c", [0]))
        expect(created(yield* changesOf("f0", { after: empty.next }))).toEqual([["submission.created", "b0"]])
        expect(created(yield* changesOf("f1", { after: read?.next }))).toEqual([["submission.created", "c0"]])
      }).pipe(withStorage(3))
    )

    it.effect("a read point bounds the feed: later commits are not read, nor counted in hasMore", () =>
      Effect.gen(function* () {
        yield* Fixtures.importFiles({ f1: tagged("a", [0, 1, 2, 3]) })
        const found = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        yield* Fixtures.appendTo("f1", tagged("b", [4, 5, 6]))
        const upTo = found.readPoint
        expect(created(yield* changesOf("f1", { upTo }))).toEqual(
          tags("a", 4).map((tag) => ["submission.created", tag])
        )
        const pages = yield* changePagesOf("f1", { upTo, limit: 2 })
        expect(pages.map((page) => [page.changes.length, page.hasMore])).toEqual([
          [2, true],
          [2, false]
        ])
        // Read on without the bound, from where the bounded read ended: the rest.
        expect(created(yield* changesOf("f1", { after: pages[1]?.next }))).toEqual(
          tags("b", 3).map((tag) => ["submission.created", tag])
        )
        // A later read point covers them.
        const again = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
        expect(yield* changesOf("f1", { upTo: again.readPoint })).toEqual(yield* changesOf("f1"))
        expect(yield* changesOf("f1", { upTo: again.readPoint })).toHaveLength(7)
      }).pipe(withStorage(3))
    )

    it.effect(
      "reads only the file's own changes, after a position of another file's feed too; a made-up one none",
      () =>
        Effect.gen(function* () {
          const files = yield* FileRepository.FileRepository
          yield* Fixtures.importFiles({ mine: tagged("m", [0, 1]), theirs: tagged("t", [0, 1]) })
          yield* Fixtures.appendTo("theirs", tagged("u", [2]))
          yield* Fixtures.appendTo("mine", tagged("n", [2, 0]))
          yield* Fixtures.appendTo("theirs", tagged("v", [3]))
          const mine = yield* changesOf("mine")
          expect(created(mine)).toEqual(["m0", "m1", "n0", "n1"].map((tag) => ["submission.created", tag]))
          for (const page of yield* changePagesOf("theirs", { limit: 1 })) {
            // Whatever the position, a read of this file gives some end of its own feed.
            const read = yield* changesOf("mine", { after: page.next })
            expect(read).toEqual(mine.slice(mine.length - read.length))
          }
          for (const made of ["", "x", "-1", "01", "1.5", " 1", "1e3", "1:1", "9223372036854775808"]) {
            expect(yield* files.readChanges(Fixtures.fileId("mine"), { after: made })).toEqual({
              changes: [],
              next: made,
              hasMore: false
            })
          }
        }).pipe(withStorage(3))
    )

    it.effect("a reader paging while appends commit sees every change exactly once, each append's in its order", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        yield* Fixtures.importFiles({ f1: tagged("i", [0, 1, 2]) })
        const appends = ["p", "q", "r", "s", "t"]
        const writers = yield* Effect.fork(
          Effect.all(
            appends.map((tag) => Fixtures.appendTo("f1", tagged(tag, [10, 5, 0, 7, 3, 2, 9, 8, 1, 4, 6, 11]))),
            { concurrency: "unbounded", discard: true }
          )
        )
        const read: Array<Seen> = []
        let after: string | undefined
        // Until every change is read: 3 imported, 5 appends of 12.
        for (let round = 0; read.length < 63; round++) {
          if (round > 10_000) throw new Error("the reader never saw every change")
          const page = yield* files.readChanges(Fixtures.fileId("f1"), { after, limit: 4 })
          read.push(...page.changes.map(seen))
          after = page.next
          if (page.changes.length === 0) yield* Effect.yieldNow()
        }
        yield* Fiber.join(writers)
        expect(new Set(read.map(([, id]) => id)).size).toBe(63)
        // Each append is one commit, so its submissions come together, in its document order.
        const order = read.map(([, , tag]) => tag as string)
        expect(order.slice(0, 3)).toEqual(tags("i", 3))
        for (let at = 3; at < 63; at += 12) {
          const tag = (order[at] as string).slice(0, 1)
          expect(order.slice(at, at + 12)).toEqual(tags(tag, 12))
        }
        // And the whole feed read again is what the reader saw.
        expect(yield* changesOf("f1")).toEqual(read)
      }).pipe(withStorage(3))
    )

    it.effect(
      "a joined page of changes is readChanges's page, each change as the reply writes it, with the same count, next and hasMore",
      () =>
        Effect.gen(function* () {
          const files = yield* FileRepository.FileRepository
          const readJoined = EncodedPages.joinedChanges(files)
          // Content that needs escaping, and one submission long enough that a page may come as bytes.
          const escaped = (tag: string, count: number) =>
            tagged(
              tag,
              Array.from({ length: count }, (_, i) => i)
            ).map((submission, i) => ({
              ...submission,
              content: { ...submission.content, note: i === 1 ? "x".repeat(70_000) : 'q"\n é😀\u2028' }
            }))
          yield* Fixtures.importFiles({ f1: escaped("a", 6), f2: tagged("x", [1]) })
          yield* Fixtures.appendTo("f1", escaped("b", 3))
          yield* Fixtures.appendTo("f2", tagged("y", [1]))
          const ids = yield* idsByTag("f1")
          const store = yield* OperatorStore.OperatorStore
          yield* store.eraseSubmissions(Fixtures.fileId("f1"), {
            _tag: "Ids",
            ids: [ids.get("a2"), ids.get("b0")] as [SubmissionId.SubmissionId, SubmissionId.SubmissionId]
          })
          const { readPoint } = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
          yield* Fixtures.appendTo("f1", escaped("c", 2))
          yield* store.eraseSubmissions(Fixtures.fileId("f1"), {
            _tag: "Ids",
            ids: [ids.get("a0")] as [SubmissionId.SubmissionId]
          })
          const whole = yield* changesOf("f1")
          expect(whole.filter(([type]) => type === "submission.erased")).toHaveLength(3)
          for (const upTo of [undefined, readPoint]) {
            for (const limit of [1, 2, 3, 5, undefined, 10_000]) {
              let after: string | undefined
              for (let read = 0; ; read++) {
                if (read > 100) throw new Error("a feed that never ends")
                const range = { after, limit, upTo }
                const page = yield* files.readChanges(Fixtures.fileId("f1"), range)
                const joined = yield* readJoined(Fixtures.fileId("f1"), range)
                expect(Fixtures.asText(joined)).toEqual(Fixtures.asText(EncodedPages.joinChanges(page)))
                if (!page.hasMore) break
                after = page.next
              }
            }
          }
          // No change: past the end, a made-up position, an unknown file.
          for (const [id, after] of [
            ["f1", String(Number.MAX_SAFE_INTEGER)],
            ["f1", "x"],
            ["no-such-file", undefined]
          ] as const) {
            const joined = yield* readJoined(Fixtures.fileId(id), { after })
            const page = yield* files.readChanges(Fixtures.fileId(id), { after })
            expect(Fixtures.asText(joined)).toEqual(Fixtures.asText(EncodedPages.joinChanges(page)))
          }
        }).pipe(withStorage(3))
    )
  })
}
