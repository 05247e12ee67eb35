/**
 * The cases of `StorageConformance.concurrentFeedSuite`: the change feed read while several instances write.
 *
 * @internal
 */
import { expect, it } from "@effect/vitest"
import { FileRepository, OperatorStore } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { MakeInstances } from "../../StorageConformance.js"
import * as Fixtures from "./fixtures.js"

const WRITERS = 4
const APPENDS = 12
const READERS = 2

// A writer's appends: one to three submissions each, backdated or not, tagged with the writer, the append and
// the submission, so the order each writer committed them in can be told from the feed.
const appendsOf = (writer: number) =>
  Array.from({ length: APPENDS }, (_, j) =>
    Array.from({ length: (j % 3) + 1 }, (_, i) => ({
      createdDate: Fixtures.at(Fixtures.JAN_1 + (((writer * 7 + j * 13 + i) % 17) - 8) * 1000),
      content: { tag: `w${writer}.${String(j).padStart(2, "0")}.${i}` }
    }))
  )

/**
 * Writers on several instances append to one file while readers on them page through its feed after each
 * `next`: every reader sees every change exactly once, in one order, the order the final feed has, which keeps
 * each writer's own order (a writer's appends commit one after another).
 *
 * @internal
 */
export const concurrentFeed = (makeInstances: MakeInstances): void => {
  it.live(
    "readers on every instance see each change of concurrent writers on every instance once, in one commit order",
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
        yield* Fixtures.importFiles({ f1: [] }).pipe(on(0))
        const done = yield* Ref.make(false)

        const write = (writer: number) =>
          Effect.gen(function* () {
            const store = yield* OperatorStore.OperatorStore
            for (const submissions of appendsOf(writer)) {
              const document = yield* Effect.orDie(AppendDocument.decode({ files: [{ id: "f1", submissions }] }))
              yield* Effect.orDie(store.appendSubmissions(document))
            }
          }).pipe(on(writer))

        // Reads after each `next` until the writers are done and a read after that finds nothing new; the first
        // reader bounds each read by the read point a request would take, as the feed's use case does.
        const read = (reader: number) =>
          Effect.gen(function* () {
            const files = yield* FileRepository.FileRepository
            const seen: Array<readonly [id: string, tag: string]> = []
            let after: string | undefined
            for (;;) {
              const finished = yield* Ref.get(done)
              const upTo =
                reader === 0 ? Option.getOrThrow(yield* files.findFile(Fixtures.fileId("f1"))).readPoint : undefined
              const page = yield* files.readChanges(Fixtures.fileId("f1"), { after, limit: 5, upTo })
              for (const change of page.changes) {
                if (change.type !== "submission.created") throw new Error(`unexpected ${change.type}`)
                seen.push([change.id, JSON.parse(change.entry).content.tag])
              }
              after = page.next
              if (page.changes.length === 0) {
                if (finished) return seen
                yield* Effect.sleep("2 millis")
              }
            }
          }).pipe(on(reader))

        const readers = Effect.all(
          Array.from({ length: READERS }, (_, reader) => read(reader)),
          { concurrency: "unbounded" }
        )
        const writers = Effect.zipRight(
          Effect.all(
            Array.from({ length: WRITERS }, (_, writer) => write(writer)),
            { concurrency: "unbounded", discard: true }
          ),
          Ref.set(done, true)
        )
        const [seenByReaders] = yield* Effect.all([readers, writers], { concurrency: "unbounded" })

        // The feed once every write committed, read on each instance.
        const final = yield* Effect.forEach(instances, (_, n) =>
          Effect.gen(function* () {
            const files = yield* FileRepository.FileRepository
            const page = yield* files.readChanges(Fixtures.fileId("f1"), { limit: 10_000 })
            return page.changes.map(
              (change) => [change.id, JSON.parse((change as { entry: string }).entry).content.tag] as const
            )
          }).pipe(on(n))
        )
        const expectedCount = WRITERS * appendsOf(0).flat().length
        expect(final[0]).toHaveLength(expectedCount)
        expect(final[1]).toEqual(final[0])
        // No gap, no repeat, one order: each reader saw exactly the final feed.
        for (const seen of seenByReaders) expect(seen).toEqual(final[0])
        // Each writer's submissions in the order it wrote them.
        const tags = (final[0] ?? []).map(([, tag]) => tag)
        for (let writer = 0; writer < WRITERS; writer++) {
          const own = tags.filter((tag) => tag.startsWith(`w${writer}.`))
          expect(own).toEqual(appendsOf(writer).flatMap((submissions) => submissions.map((row) => row.content.tag)))
        }
        // Each id is the one the file's pages show, read on the other instance.
        const pages = yield* Fixtures.pagesOf("f1", {}).pipe(on(1))
        const idOf = new Map(
          pages.flatMap((page) => page.entries.map((entry, i) => [JSON.parse(entry).content.tag, page.ids[i]]))
        )
        expect((final[0] ?? []).every(([id, tag]) => idOf.get(tag) === id)).toBe(true)
      }).pipe(Effect.scoped)
  )
}
