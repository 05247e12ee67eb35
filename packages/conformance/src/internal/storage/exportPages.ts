/**
 * The `exportPages` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { EncodedPages, ExportEncoder, ExportSubmissions, FileRepository } from "@filedata/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Fixtures from "./fixtures.js"

/**
 * Export pages: each page's CSV rows are the core's rendering of its entries, its NDJSON lines the entries with
 * their ids, after appends.
 *
 * @internal
 */
export const exportPages = (withStorage: Fixtures.WithStorage): void => {
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

    // The body made from `readSubmissions` pages: each CSV row as the core renders it, each NDJSON line the
    // entry with its id first; what an adapter's own pages must equal.
    const rendered = (id: string, format: "csv" | "ndjson", since: number | undefined) =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        const found = Option.getOrThrow(yield* files.findFile(Fixtures.fileId(id)))
        const names = yield* files.readContentNames(Fixtures.fileId(id), found.readPoint)
        const pages = yield* Fixtures.pagesOf(id, { since, upTo: found.readPoint })
        if (format === "ndjson") {
          return pages.flatMap((page) => page.entries.map((_, i) => `${Fixtures.withId(page, i)}\n`)).join("")
        }
        const rows: EncodedPages.ExportRows = { format, names }
        const body = pages.map((page) => EncodedPages.joinedText(EncodedPages.render(rows, page))).join("")
        return ExportEncoder.csvHeader(names) + body
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
        return Chunk.join(yield* Stream.runCollect(ExportEncoder.encode(reply)), "")
      })

    it.effect(
      "each page's CSV rows are the core's rendering of its entries, NDJSON lines carry ids, after appends",
      () =>
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
