import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Stream from "effect/Stream"
import {
  type FileId,
  type StoredFile,
  type StoredSubmission,
  timestampFromEpochMillis,
  type UserId
} from "../src/FileData.js"
import * as FileDataJson from "../src/FileDataJson.js"
import * as FileDataReply from "../src/FileDataReply.js"
import * as SubmissionEntry from "../src/SubmissionEntry.js"

const FIELDS = ["name", "creationDate", "publicAvailability", "SubmissionCounter", "VisitCounter", "submissions"]

const text = FastCheck.oneof(
  FastCheck.string(),
  FastCheck.string({ unit: "grapheme" }),
  FastCheck.string({ unit: "binary" }),
  FastCheck.constantFrom("", '"', "\\", '"quoted"', "\u2028\u2029", "</script>", "\u0000", "😀")
)
const contentKey = FastCheck.oneof(
  text,
  FastCheck.constantFrom("__proto__", "constructor", "prototype", "toString", "", '"', "0", "10", "-1")
)
const instant = FastCheck.integer({
  min: Date.parse("0000-01-01T00:00:00.000Z"),
  max: Date.parse("9999-12-31T23:59:59.999Z")
})

/** Content as stored: JSON text written key by key, in the given order. */
const contentJson = FastCheck.uniqueArray(FastCheck.tuple(contentKey, text), {
  selector: ([key]) => key,
  maxLength: 6
}).map((entries) => `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(",")}}`)

const storedFile = FastCheck.record({
  id: FastCheck.string({ minLength: 1 }).map((id) => id as FileId),
  ownerId: FastCheck.string({ minLength: 1 }).map((id) => id as UserId),
  name: text,
  creationDate: instant.map(timestampFromEpochMillis),
  publicAvailability: FastCheck.boolean(),
  SubmissionCounter: FastCheck.nat(),
  VisitCounter: FastCheck.nat()
})

const storedSubmission = FastCheck.record({
  createdDate: instant.map(timestampFromEpochMillis),
  contentJson
})

/** Splits rows into pages of the given sizes (empty pages included); what is left is the last page. */
const paged = (rows: ReadonlyArray<StoredSubmission>, sizes: ReadonlyArray<number>) => {
  const pages: Array<Chunk.Chunk<StoredSubmission>> = []
  let at = 0
  for (const size of sizes) {
    pages.push(Chunk.fromIterable(rows.slice(at, at + size)))
    at += size
  }
  pages.push(Chunk.fromIterable(rows.slice(at)))
  return pages
}

const replyOf = (
  file: StoredFile,
  pages: ReadonlyArray<Chunk.Chunk<StoredSubmission>>
): FileDataReply.FileDataReply => ({
  file,
  // Page by page, empty pages kept, as a paging adapter may return them.
  submissionPage: (after) =>
    Effect.sync(() => {
      const i = after === undefined ? 0 : Number(after)
      return {
        entries: Chunk.toReadonlyArray(pages[i] ?? Chunk.empty()).map(SubmissionEntry.fromStored),
        next: String(i + 1),
        hasMore: i + 1 < pages.length
      }
    })
})

const encodeToPieces = (reply: FileDataReply.FileDataReply) =>
  Stream.runCollect(FileDataJson.encode(reply)).pipe(Effect.map(Chunk.toReadonlyArray))

describe("FileDataJson", () => {
  it.effect.prop(
    "encode writes exactly the reply, whatever the names, contents and pages",
    {
      file: storedFile,
      rows: FastCheck.array(storedSubmission, { maxLength: 8 }),
      sizes: FastCheck.array(FastCheck.nat(3), { maxLength: 6 })
    },
    ({ file, rows, sizes }) =>
      Effect.gen(function* () {
        const pages = paged(rows, sizes)
        const pieces = yield* encodeToPieces(replyOf(file, pages))
        const parsed = JSON.parse(pieces.join(""))

        expect(Object.keys(parsed)).toEqual(FIELDS)
        expect(parsed).toEqual({
          name: file.name,
          creationDate: file.creationDate,
          publicAvailability: file.publicAvailability,
          SubmissionCounter: file.SubmissionCounter,
          VisitCounter: file.VisitCounter,
          submissions: rows.map((row) => ({ createdDate: row.createdDate, content: JSON.parse(row.contentJson) }))
        })
        expect(parsed.submissions).toHaveLength(rows.length)
        rows.forEach((row, i) => {
          const submission = parsed.submissions[i]
          const expected = JSON.parse(row.contentJson)
          expect(Object.keys(submission)).toEqual(["createdDate", "content"])
          expect(Object.keys(submission.content)).toEqual(Object.keys(expected))
          expect(Object.getPrototypeOf(submission.content)).toBe(Object.prototype)
        })
        // One piece per page read, the head riding on the first and the tail on the last: the reply streams
        // page by page and a one-page reply is a single write.
        expect(pieces).toHaveLength(pages.length)

        const collected = yield* FileDataReply.toFileData(replyOf(file, pages))
        expect(Object.keys(collected)).toEqual(FIELDS)
        expect(collected).toEqual(parsed)
        collected.submissions.forEach((submission, i) => {
          expect(Object.keys(submission.content)).toEqual(Object.keys(parsed.submissions[i].content))
        })
      }),
    { fastCheck: { numRuns: 100 } }
  )

  const file: StoredFile = {
    id: "f" as FileId,
    ownerId: "u" as UserId,
    name: 'Say "hi"',
    creationDate: timestampFromEpochMillis(Date.UTC(2024, 0, 1)),
    publicAvailability: false,
    SubmissionCounter: 3,
    VisitCounter: 0
  }

  it.prop("SubmissionEntry.parse gives back the parts of what fromStored wrote", [storedSubmission], ([row]) => {
    expect(SubmissionEntry.parse(SubmissionEntry.fromStored(row))).toEqual(row)
  })

  it.prop(
    "SubmissionEntry.fromColumns keeps a stored entry and renders a row without one as render does",
    [instant, contentJson],
    ([millis, content]) => {
      const rendered = SubmissionEntry.render(millis, content)
      expect(JSON.parse(rendered)).toEqual({
        createdDate: timestampFromEpochMillis(millis),
        content: JSON.parse(content)
      })
      expect(SubmissionEntry.fromColumns(null, millis, content)).toBe(rendered)
      expect(SubmissionEntry.fromColumns(undefined, millis, content)).toBe(rendered)
      expect(SubmissionEntry.fromColumns("stored text", millis, content)).toBe("stored text")
    }
  )

  it.effect("keeps __proto__ in content as an own key", () =>
    Effect.gen(function* () {
      const row: StoredSubmission = {
        createdDate: file.creationDate,
        contentJson: '{"__proto__":"x","a":"b"}'
      }
      const pieces = yield* encodeToPieces(replyOf(file, [Chunk.of(row)]))
      const content = JSON.parse(pieces.join("")).submissions[0].content
      expect(Object.hasOwn(content, "__proto__")).toBe(true)
      expect(Object.getOwnPropertyDescriptor(content, "__proto__")?.value).toBe("x")
      expect(Object.keys(content)).toEqual(["__proto__", "a"])

      const collected = yield* FileDataReply.toFileData(replyOf(file, [Chunk.of(row)]))
      const collectedContent = collected.submissions[0]?.content ?? {}
      expect(Object.hasOwn(collectedContent, "__proto__")).toBe(true)
      expect(Object.keys(collectedContent)).toEqual(["__proto__", "a"])
    })
  )

  it.effect("an empty file gives an empty submissions array", () =>
    Effect.gen(function* () {
      const pieces = yield* encodeToPieces(replyOf(file, [Chunk.empty(), Chunk.empty()]))
      expect(pieces.join("")).toBe(
        '{"name":"Say \\"hi\\"","creationDate":"2024-01-01T00:00:00.000Z","publicAvailability":false,' +
          '"SubmissionCounter":3,"VisitCounter":0,"submissions":[]}'
      )
      const collected = yield* FileDataReply.toFileData(replyOf(file, []))
      expect(collected.submissions).toEqual([])
    })
  )

  it.effect("the stream reads a page only when its piece is pulled, so a slow reader holds one page", () =>
    Effect.gen(function* () {
      const row = { createdDate: timestampFromEpochMillis(0), contentJson: "{}" } as StoredSubmission
      const base = replyOf(file, [Chunk.of(row), Chunk.of(row), Chunk.of(row), Chunk.of(row)])
      let reads = 0
      const reply: FileDataReply.FileDataReply = {
        ...base,
        submissionPage: (after) =>
          Effect.zipLeft(
            base.submissionPage(after),
            Effect.sync(() => reads++)
          )
      }
      const first = yield* Stream.runCollect(Stream.take(FileDataJson.encode(reply), 1))
      expect(Chunk.size(first)).toBe(1)
      expect(reads).toBe(1)
    })
  )

  it.effect("a long page is written in pieces of about maxPieceLength; a longer submission gets one of its own", () =>
    Effect.gen(function* () {
      const sized = (n: number, length: number): StoredSubmission => ({
        createdDate: timestampFromEpochMillis(n),
        contentJson: JSON.stringify({ n: String(n), pad: "x".repeat(length) })
      })
      const rows = [
        ...Array.from({ length: 900 }, (_, n) => sized(n, 200)),
        sized(900, 3 * FileDataJson.maxPieceLength),
        ...Array.from({ length: 300 }, (_, n) => sized(901 + n, 200))
      ]
      const reply = replyOf(file, paged(rows, [1000]))
      const written: Array<readonly [string, boolean]> = []
      yield* FileDataJson.writeTo(reply, (piece, last) => Effect.sync(() => written.push([piece, last])))

      expect(JSON.parse(written.map(([piece]) => piece).join("")).submissions).toEqual(
        rows.map((row) => ({ createdDate: row.createdDate, content: JSON.parse(row.contentJson) }))
      )
      expect(written.map(([, last]) => last)).toEqual(written.map((_, i) => i === written.length - 1))
      const long = written.filter(([piece]) => piece.length > FileDataJson.maxPieceLength + FileDataJson.tail.length)
      expect(long).toHaveLength(1)
      expect(long[0]?.[0]).toBe(`,${SubmissionEntry.fromStored(rows[900] as StoredSubmission)}`)
      expect(written.length).toBeGreaterThan(5)
    })
  )
})
