/**
 * The `appends` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { Append, OperatorStore } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Fixtures from "./fixtures.js"

/**
 * Appends: counters, refusals that write nothing, readers that see all or none of one.
 *
 * @internal
 */
export const appends = (withStorage: Fixtures.WithStorage): void => {
  describe("OperatorStore.appendSubmissions", () => {
    const MAX = Number.MAX_SAFE_INTEGER
    const at = (millis: number) => new Date(Date.UTC(2024, 5, 1) + millis).toISOString()
    const tagged = (tags: ReadonlyArray<string>, millis: (i: number) => number = (i) => i) =>
      tags.map((tag, i) => ({ createdDate: at(millis(i)), content: { tag } }))
    const tags = (id: string) =>
      Effect.map(Fixtures.readSubmissions(id), (rows) => rows.map((row) => JSON.parse(row.contentJson).tag as string))
    const counters = (id: string) =>
      Effect.map(
        Fixtures.findFile("k1", id),
        Option.map((found) => [found.SubmissionCounter, found.VisitCounter])
      )
    const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`)
    const base = {
      users: [{ id: "u1", apiKeys: ["k1"] }],
      files: [
        Fixtures.file({ id: "f1", userId: "u1", submissions: tagged(["old0", "old1"]) }),
        { ...Fixtures.file({ id: "f2", userId: "u1" }), SubmissionCounter: 7, VisitCounter: 40 },
        Fixtures.file({ id: "f3", userId: "u1" }),
        { ...Fixtures.file({ id: "f-max", userId: "u1" }), SubmissionCounter: MAX - 1 }
      ]
    }
    const unchanged = Effect.gen(function* () {
      expect(yield* tags("f1")).toEqual(["old0", "old1"])
      expect(yield* tags("f2")).toEqual([])
      expect(yield* tags("f-max")).toEqual([])
      expect(yield* counters("f1")).toEqual(Option.some([2, 0]))
      expect(yield* counters("f2")).toEqual(Option.some([7, 40]))
      expect(yield* counters("f-max")).toEqual(Option.some([MAX - 1, 0]))
    })

    it.effect("appends to one file across batches and grows its SubmissionCounter by the number appended", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(base)
        const added = numbered("new", 1250)
        const summary = yield* Fixtures.appendDocument({
          files: [{ id: "f1", submissions: tagged(added, (i) => 10 + i) }]
        })
        expect(summary).toEqual({ files: 1, submissions: 1250 })
        expect(yield* tags("f1")).toEqual(["old0", "old1", ...added])
        expect(yield* counters("f1")).toEqual(Option.some([1252, 0]))
        expect(yield* counters("f2")).toEqual(Option.some([7, 40]))
        expect(yield* tags("f2")).toEqual([])
      }).pipe(withStorage(500))
    )

    it.effect("appends to several files at once and replaces VisitCounter only where it is given", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(base)
        const summary = yield* Fixtures.appendDocument({
          files: [
            { submissions: tagged(["a"], () => 100), VisitCounter: 3, id: "f2" },
            { id: "f3", submissions: tagged(["b", "c"]) },
            { id: "f1", VisitCounter: 12 },
            { id: "f-max", VisitCounter: 0, submissions: tagged(["d"]) }
          ]
        })
        expect(summary).toEqual({ files: 4, submissions: 4 })
        expect(yield* counters("f1")).toEqual(Option.some([2, 12]))
        expect(yield* counters("f2")).toEqual(Option.some([8, 3]))
        expect(yield* counters("f3")).toEqual(Option.some([2, 0]))
        expect(yield* counters("f-max")).toEqual(Option.some([MAX, 0]))
        expect(yield* tags("f1")).toEqual(["old0", "old1"])
        expect(yield* tags("f2")).toEqual(["a"])
        expect(yield* tags("f3")).toEqual(["b", "c"])
        expect(yield* tags("f-max")).toEqual(["d"])
      }).pipe(withStorage())
    )

    it.effect("updates the counters of more files than one statement takes", () =>
      Effect.gen(function* () {
        const ids = numbered("many-", 1100)
        yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: ids.map((id) => Fixtures.file({ id, userId: "u1" }))
        })
        const summary = yield* Fixtures.appendDocument({
          files: ids.map((id, i) => ({
            id,
            submissions: tagged(numbered(`${id}/`, i % 3)),
            ...(i % 2 === 0 ? { VisitCounter: i } : {})
          }))
        })
        expect(summary).toEqual({ files: 1100, submissions: 1099 })
        const found = yield* Effect.forEach(ids, (id) => Fixtures.findFile("k1", id))
        expect(found.map(Option.map((f) => [f.SubmissionCounter, f.VisitCounter]))).toEqual(
          ids.map((_, i) => Option.some([i % 3, i % 2 === 0 ? i : 0]))
        )
        expect(yield* tags("many-1099")).toEqual(["many-1099/0"])
      }).pipe(withStorage())
    )

    it.effect(
      "keeps ties in insertion order: the file's earlier rows first, then each append's in document order",
      () =>
        Effect.gen(function* () {
          const imported = [...tagged(["old0", "old1"], () => 5), ...tagged(["later"], () => 6)]
          yield* Fixtures.importDocument({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [Fixtures.file({ id: "f1", userId: "u1", submissions: imported })]
          })
          yield* Fixtures.appendDocument({
            files: [
              {
                id: "f1",
                submissions: [...tagged(["new0"], () => 5), ...tagged(["early"], () => 4), ...tagged(["new1"], () => 5)]
              }
            ]
          })
          expect(yield* tags("f1")).toEqual(["early", "old0", "old1", "new0", "new1", "later"])
          // A second append, here decoded whole as an embedder hands one over, goes after the first.
          const store = yield* OperatorStore.OperatorStore
          const second = yield* Effect.orDie(
            AppendDocument.decode({ files: [{ id: "f1", submissions: tagged(["new2", "new3"], () => 5) }] })
          )
          expect(yield* store.appendSubmissions(second)).toEqual({ files: 1, submissions: 2 })
          expect(yield* tags("f1")).toEqual(["early", "old0", "old1", "new0", "new1", "new2", "new3", "later"])
          expect(yield* counters("f1")).toEqual(Option.some([8, 0]))
        }).pipe(withStorage(2))
    )

    it.effect(
      "refuses unknown ids, a file named twice and a counter past the safe integers, by path, writing nothing",
      () =>
        Effect.gen(function* () {
          yield* Fixtures.importDocument(base)
          const issues = yield* Fixtures.appendIssues({
            files: [
              { id: "f1", VisitCounter: 99, submissions: tagged(["x", "y"]) },
              { id: "nope", submissions: tagged(["z"]) },
              { id: "f1" },
              { id: "f-max", submissions: tagged(["p", "q"]) },
              { id: "f-gone" },
              { id: "F2" }
            ]
          })
          expect(issues).toEqual([
            { path: "$.files[1].id", detail: "no file has this id" },
            { path: "$.files[2].id", detail: "file id appears twice" },
            {
              path: "$.files[3].submissions",
              detail: `would take SubmissionCounter (${MAX - 1}) past the largest safe integer, ${MAX}`
            },
            { path: "$.files[4].id", detail: "no file has this id" },
            { path: "$.files[5].id", detail: "no file has this id" }
          ])
          yield* unchanged
          // The counter may reach the largest safe integer itself.
          expect(yield* Fixtures.appendDocument({ files: [{ id: "f-max", submissions: tagged(["p"]) }] })).toEqual({
            files: 1,
            submissions: 1
          })
          expect(yield* counters("f-max")).toEqual(Option.some([MAX, 0]))
        }).pipe(withStorage())
    )

    it.effect("names decoding problems and what storage refuses together, ordered by entry, writing nothing", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(base)
        const broken = tagged(numbered("s", 300)).map((row, i) => (i === 250 ? { ...row, content: "text" } : row))
        const issues = yield* Fixtures.appendIssues({
          files: [
            { id: "f1", submissions: broken },
            { id: "nope", VisitCounter: 1 },
            { id: "f2", VisitCounter: -1 },
            { id: "f-max", submissions: tagged(["p", "q"]) },
            { id: "f1" }
          ]
        })
        expect(issues).toEqual([
          { path: "$.files[0].submissions[250].content", detail: "must be an object of strings" },
          { path: "$.files[1].id", detail: "no file has this id" },
          { path: "$.files[2].VisitCounter", detail: "must be a non-negative integer" },
          { path: "$.files[4].id", detail: "file id appears twice" }
        ])
        yield* unchanged
      }).pipe(withStorage())
    )

    it.effect("writes nothing when its stream fails or an entry is refused part-way, and blocks no later append", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        yield* Fixtures.importDocument(base)
        const decoded = yield* Effect.orDie(
          AppendDocument.decode({
            files: [
              { id: "f2", submissions: tagged(numbered("s", 1200)), VisitCounter: 1 },
              { id: "f1", submissions: tagged(["t"]) }
            ]
          })
        )
        const entries = Append.entries(decoded)
        const error = yield* Effect.flip(
          store.appendSubmissions(Stream.concat(entries, Stream.fail("the source went away" as const)))
        )
        expect(error).toBe("the source went away")
        yield* unchanged
        const late = tagged(numbered("s", 1000)).map((row, i) => (i === 999 ? { ...row, createdDate: "later" } : row))
        expect(yield* Fixtures.appendIssues({ files: [{ id: "f1", submissions: late }] })).toEqual([
          {
            path: "$.files[0].submissions[999].createdDate",
            detail: "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
          }
        ])
        yield* unchanged
        expect(yield* store.appendSubmissions(entries)).toEqual({ files: 2, submissions: 1201 })
        expect(yield* counters("f2")).toEqual(Option.some([1207, 1]))
        expect(yield* counters("f1")).toEqual(Option.some([3, 0]))
      }).pipe(withStorage())
    )

    it.effect("takes an empty append, and a file entry with nothing to add, without changing anything", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(base)
        const nothing = { files: 0, submissions: 0 }
        expect(yield* Fixtures.appendDocument({})).toEqual(nothing)
        expect(yield* Fixtures.appendDocument({ files: [] })).toEqual(nothing)
        const empty = yield* Fixtures.appendDocument({ files: [{ id: "f1", submissions: [] }, { id: "f2" }] })
        expect(empty).toEqual({ ...nothing, files: 2 })
        yield* unchanged
      }).pipe(withStorage())
    )

    it.effect("shows a reader the file as it was while an append is under way, and all of it once it ends", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        yield* Fixtures.importDocument(base)
        const reached = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        const batch = (from: number, to: number) =>
          Append.AppendEntry.Submissions({
            submissions: Array.from({ length: to - from }, (_, i) => ({
              file: 0,
              createdDate: Date.parse(at(10 + from + i)),
              contentJson: JSON.stringify({ tag: `new${from + i}` })
            }))
          })
        const source = Stream.concat(
          Stream.make(batch(0, 150)),
          Stream.concat(
            Stream.drain(
              Stream.fromEffect(Effect.zipRight(Deferred.succeed(reached, undefined), Deferred.await(gate)))
            ),
            Stream.make(
              batch(150, 300),
              Append.AppendEntry.File({ file: { id: Fixtures.fileId("f1"), VisitCounter: 5 }, index: 0 })
            )
          )
        )
        const append = yield* Effect.fork(store.appendSubmissions(source))
        yield* Deferred.await(reached)
        yield* unchanged
        expect(Option.isSome(yield* Fixtures.findFile("k1", "f1"))).toBe(true)
        yield* Deferred.succeed(gate, undefined)
        expect(yield* Fiber.join(append)).toEqual({ files: 1, submissions: 300 })
        expect(yield* counters("f1")).toEqual(Option.some([302, 5]))
        expect(yield* tags("f1")).toEqual(["old0", "old1", ...numbered("new", 300)])
      }).pipe(withStorage())
    )
  })
}
