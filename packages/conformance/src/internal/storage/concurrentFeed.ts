/**
 * The cases of `StorageConformance.concurrentFeedSuite`: the change feed read while several instances append
 * and erase.
 *
 * @internal
 */
import { expect, it } from "@effect/vitest"
import { type Erasure, FileRepository, OperatorStore, type SubmissionId } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import type * as Arr from "effect/Array"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { MakeInstances } from "../../StorageConformance.js"
import * as Fixtures from "./fixtures.js"

const WRITERS = 4
const APPENDS = 12
const READERS = 2
const ERASERS = 2

// Who erases a submission: its first one is kept, so every append leaves a change in the final feed; the others
// are erased by id (by the eraser of the writer's parity) or by content (by the eraser of the batch's parity).
type Kind = "keep" | "id" | "where"

const kindOf = (writer: number, j: number, i: number): Kind =>
  i === 0 ? "keep" : (writer + j + i) % 2 === 0 ? "id" : "where"

const batchOf = (j: number) => String(j).padStart(2, "0")

// A writer's appends: one to three submissions each, backdated or not, tagged with the writer, the append and
// the submission, so the order each writer committed them in can be told from the feed.
const appendsOf = (writer: number) =>
  Array.from({ length: APPENDS }, (_, j) =>
    Array.from({ length: (j % 3) + 1 }, (_, i) => ({
      createdDate: Fixtures.at(Fixtures.JAN_1 + (((writer * 7 + j * 13 + i) % 17) - 8) * 1000),
      content: { tag: `w${writer}.${batchOf(j)}.${i}`, batch: batchOf(j), kind: kindOf(writer, j, i) }
    }))
  )

interface Tag {
  readonly text: string
  readonly writer: number
  readonly append: number
  readonly index: number
  readonly kind: Kind
}

const parseTag = (tag: string): Tag => {
  const [writer, append, index] = tag
    .slice(1)
    .split(".")
    .map((part) => Number(part)) as [number, number, number]
  return { text: tag, writer, append, index, kind: kindOf(writer, append, index) }
}

// A change as a reader keeps it; `type` and `id` name it (an id has one change of each type at most).
interface Seen {
  readonly type: FileRepository.Change["type"]
  readonly id: string
  readonly tag?: Tag
}

const key = (change: Seen) => `${change.type} ${change.id}`

const seenOf = (change: FileRepository.Change): Seen =>
  change.type === "submission.created"
    ? { type: change.type, id: change.id, tag: parseTag(JSON.parse(change.entry).content.tag) }
    : { type: change.type, id: change.id }

const byIds = (ids: Arr.NonEmptyReadonlyArray<string>): Erasure.Selection => ({
  _tag: "Ids",
  ids: ids as Arr.NonEmptyReadonlyArray<SubmissionId.SubmissionId>
})

const where = (batch: string): Erasure.Selection => ({
  _tag: "Where",
  matches: [
    { name: "kind", value: "where" },
    { name: "batch", value: batch }
  ]
})

/**
 * Writers on several instances append to one file while erasers on them erase some of its submissions, by id
 * and by content, and readers on them page through its feed after each `next`. Positions are commit order, so
 * for every reader: its changes are distinct; those still in the final feed (read once every write committed)
 * are the final feed, in its order, none missed; the only others are `created` changes of submissions erased
 * later, each in its append's run of changes and before its `erased` change. The final feed holds each kept
 * submission's `created` change and each erased one's `erased` change, once, keeping each writer's order and
 * each eraser's.
 *
 * @internal
 */
export const concurrentFeed = (makeInstances: MakeInstances): void => {
  it.live(
    "readers on every instance see each change of concurrent appends and erasures on every instance once, in commit order",
    () =>
      Effect.gen(function* () {
        const instances = yield* makeInstances(2)
        const on =
          (n: number) =>
          <A, E, R>(self: Effect.Effect<A, E, R>) =>
            Effect.provide(
              self,
              instances[n % instances.length] as Context.Context<
                FileRepository.FileRepository | OperatorStore.OperatorStore
              >
            )
        const file = Fixtures.fileId("f1")
        yield* Fixtures.importFiles({ f1: [] }).pipe(on(0))
        // Whether the writers are done, and whether the erasers are too.
        const done = yield* Ref.make(false)
        const quiet = yield* Ref.make(false)
        // Each eraser's erasures, in the order they committed, and how many ids were erased while appends ran.
        const erasedBy = Array.from({ length: 2 * ERASERS }, () => [] as Array<ReadonlyArray<string>>)
        const erasedWhileWriting = yield* Ref.make(0)

        const write = (writer: number) =>
          Effect.gen(function* () {
            const store = yield* OperatorStore.OperatorStore
            for (const submissions of appendsOf(writer)) {
              const document = yield* Effect.orDie(AppendDocument.decode({ files: [{ id: "f1", submissions }] }))
              yield* Effect.orDie(store.appendSubmissions(document))
              // A turn for the others: on SQLite a write runs on the event loop and would not let go otherwise.
              yield* Effect.sleep("1 millis")
            }
          }).pipe(on(writer))

        const erase = (eraser: number, selection: Erasure.Selection) =>
          Effect.gen(function* () {
            const store = yield* OperatorStore.OperatorStore
            const summary = yield* Effect.orDie(store.eraseSubmissions(file, selection))
            if (summary.ids.length === 0) return summary
            erasedBy[eraser]?.push(summary.ids)
            if (!(yield* Ref.get(done))) yield* Ref.update(erasedWhileWriting, (n) => n + summary.ids.length)
            return summary
          })

        // Follows the feed and erases, by their ids, the submissions of its writers (of its parity) to be erased
        // by id, a few at a time, until the writers are done and it has caught up.
        const eraseByIds = (eraser: number) =>
          Effect.gen(function* () {
            const files = yield* FileRepository.FileRepository
            let after: string | undefined
            for (;;) {
              const finished = yield* Ref.get(done)
              const page = yield* files.readChanges(file, { after, limit: 7 })
              after = page.next
              const ids = page.changes.flatMap((change) => {
                const seen = seenOf(change)
                return seen.tag?.kind === "id" && seen.tag.writer % ERASERS === eraser ? [seen.id] : []
              })
              if (ids.length > 0) {
                const summary = yield* erase(eraser, byIds(ids as [string, ...Array<string>]))
                expect([...summary.ids].sort()).toEqual([...ids].sort())
              } else if (page.changes.length === 0) {
                if (finished) return
                yield* Effect.sleep("2 millis")
              }
            }
          }).pipe(on(eraser))

        // Erases by content, again and again while the writers run, the batches of its parity, each as far as it
        // is committed; once more when they are done, so that none is left.
        const eraseWhere = (eraser: number) =>
          Effect.gen(function* () {
            const batches = Array.from({ length: APPENDS }, (_, j) => j).filter((j) => j % ERASERS === eraser)
            for (;;) {
              const finished = yield* Ref.get(done)
              for (const j of batches) {
                yield* erase(ERASERS + eraser, where(batchOf(j)))
                yield* Effect.sleep("3 millis")
              }
              if (finished) return
            }
          }).pipe(on(eraser + 1))

        // Reads after each `next` until every write is done and a read after that finds nothing new; the first
        // reader bounds each read by the read point a request would take, as the feed's use case does.
        const read = (reader: number) =>
          Effect.gen(function* () {
            const files = yield* FileRepository.FileRepository
            const seen: Array<Seen> = []
            let after: string | undefined
            for (;;) {
              const finished = yield* Ref.get(quiet)
              const upTo = reader === 0 ? Option.getOrThrow(yield* files.findFile(file)).readPoint : undefined
              const page = yield* files.readChanges(file, { after, limit: 5, upTo })
              seen.push(...page.changes.map(seenOf))
              after = page.next
              if (page.changes.length === 0) {
                if (finished) return seen
                yield* Effect.sleep("2 millis")
              }
            }
          }).pipe(on(reader))

        const all = <A, E, R>(effects: ReadonlyArray<Effect.Effect<A, E, R>>) =>
          Effect.all(effects, { concurrency: "unbounded" })
        const writers = Effect.zipRight(
          all(Array.from({ length: WRITERS }, (_, writer) => write(writer))),
          Ref.set(done, true)
        )
        const erasers = all([
          ...Array.from({ length: ERASERS }, (_, eraser) => eraseByIds(eraser)),
          ...Array.from({ length: ERASERS }, (_, eraser) => eraseWhere(eraser))
        ])
        const readers = all(Array.from({ length: READERS }, (_, reader) => read(reader)))
        const seenByReaders = yield* Effect.zipLeft(
          readers,
          Effect.zipRight(all([writers, erasers]), Ref.set(quiet, true)),
          { concurrent: true }
        )

        // The feed once every write committed, read on each instance.
        const final = yield* Effect.forEach(instances, (_, n) =>
          Effect.gen(function* () {
            const files = yield* FileRepository.FileRepository
            const page = yield* files.readChanges(file, { limit: 10_000 })
            expect(page.hasMore).toBe(false)
            return page.changes.map(seenOf)
          }).pipe(on(n))
        )
        const feed = final[0] ?? []
        expect(final[1]).toEqual(feed)

        // What the final feed holds: each kept submission's `created` change, each erased one's `erased` change.
        const written = Array.from({ length: WRITERS }, (_, writer) =>
          appendsOf(writer).flatMap((submissions) => submissions.map((row) => parseTag(row.content.tag)))
        ).flat()
        const erasedIds = erasedBy.flat(2)
        expect(new Set(erasedIds).size).toBe(erasedIds.length)
        expect(erasedIds).toHaveLength(written.filter((tag) => tag.kind !== "keep").length)
        expect(new Set(feed.map(key)).size).toBe(feed.length)
        expect(
          feed.flatMap((change) => (change.type === "submission.created" ? [change.tag?.text] : [])).sort()
        ).toEqual(written.flatMap((tag) => (tag.kind === "keep" ? [tag.text] : [])).sort())
        expect(
          feed
            .filter((change) => change.type === "submission.erased")
            .map((change) => change.id)
            .sort()
        ).toEqual([...erasedIds].sort())
        // The erasers ran among the appends, or this case would say nothing of them.
        expect(yield* Ref.get(erasedWhileWriting)).toBeGreaterThan(0)

        // Each writer's submissions, and each eraser's erasures, in the order they were written.
        const writerOrder = (changes: ReadonlyArray<Seen>) => {
          for (let writer = 0; writer < WRITERS; writer++) {
            const own = changes.flatMap((change) => (change.tag?.writer === writer ? [change.tag] : []))
            const places = own.map((tag) => tag.append * 3 + tag.index)
            expect(places).toEqual([...places].sort((a, b) => a - b))
          }
        }
        writerOrder(feed)
        for (const erasures of erasedBy) {
          const erasureOf = new Map(erasures.flatMap((ids, n) => ids.map((id) => [id, n] as const)))
          const order = feed.flatMap((change) => {
            const n = change.type === "submission.erased" ? erasureOf.get(change.id) : undefined
            return n === undefined ? [] : [n]
          })
          expect(order).toEqual([...order].sort((a, b) => a - b))
        }

        const erased = new Set(erasedIds)
        const inFeed = new Set(feed.map(key))
        for (const seen of seenByReaders) {
          // No change twice; every change of the final feed, in its order.
          expect(new Set(seen.map(key)).size).toBe(seen.length)
          expect(seen.filter((change) => inFeed.has(key(change)))).toEqual(feed)
          writerOrder(seen)
          // The others: `created` changes of submissions erased later, read before their `erased` change, each
          // right after the change before it in its append, so at the place its commit gave it.
          const at = new Map(seen.map((change, n) => [key(change), n]))
          seen.forEach((change, n) => {
            if (inFeed.has(key(change))) return
            expect(change.type).toBe("submission.created")
            expect(erased.has(change.id)).toBe(true)
            expect(n).toBeLessThan(at.get(`submission.erased ${change.id}`) ?? -1)
            const before = seen[n - 1]?.tag
            expect(before?.writer).toBe(change.tag?.writer)
            expect(before?.append).toBe(change.tag?.append)
            expect(before?.index).toBeLessThan(change.tag?.index ?? 0)
          })
        }

        // Each kept id is the one the file's pages show, read on the other instance, and only they are left.
        const pages = yield* Fixtures.pagesOf("f1", {}).pipe(on(1))
        const idOf = new Map(
          pages.flatMap((page) => page.entries.map((entry, i) => [JSON.parse(entry).content.tag, page.ids[i]]))
        )
        const created = feed.filter((change) => change.type === "submission.created")
        expect(idOf.size).toBe(created.length)
        for (const change of created) expect(idOf.get(change.tag?.text)).toBe(change.id)
      }).pipe(Effect.scoped)
  )
}
