import { describe, expect, it } from "@effect/vitest"
import { Arbitraries } from "@filedata/testing"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Stream from "effect/Stream"
import * as FileDataEncoder from "../../src/read/FileDataEncoder.js"
import * as FileDataReply from "../../src/read/FileDataReply.js"
import * as EncodedPages from "../../src/shared/EncodedPages.js"
import {
  type FileId,
  type StoredFile,
  type StoredSubmission,
  timestampFromEpochMillis,
  type UserId
} from "../../src/shared/FileData.js"
import type { StorageUnavailable } from "../../src/shared/FileDataError.js"
import * as FileRepository from "../../src/shared/FileRepository.js"
import * as SubmissionEntry from "../../src/shared/SubmissionEntry.js"
import * as SubmissionId from "../../src/shared/SubmissionId.js"

const FIELDS = ["name", "creationDate", "publicAvailability", "SubmissionCounter", "VisitCounter", "submissions"]

const text = FastCheck.oneof(
  FastCheck.string(),
  FastCheck.string({ unit: "grapheme" }),
  Arbitraries.binaryString(),
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

const encoder = new TextEncoder()

/** Pages as an adapter joins them: as text, as bytes, or (`mixed`) the first as text and the others as bytes. */
type Joined = "text" | "bytes" | "mixed"

const replyOf = (
  file: StoredFile,
  pages: ReadonlyArray<Chunk.Chunk<StoredSubmission>>,
  kind: Joined = "mixed"
): FileDataReply.FileDataReply => {
  // Page by page, empty pages kept, as a paging adapter may return them.
  const readSubmissions = (_fileId: FileId, range: FileRepository.SubmissionRange) =>
    Effect.sync((): FileRepository.SubmissionPage => {
      const i = range.after === undefined ? 0 : Number(range.after)
      const entries = Chunk.toReadonlyArray(pages[i] ?? Chunk.empty()).map(SubmissionEntry.fromStored)
      const ids = entries.map((_, n) => SubmissionId.unsafeStored(`sub_p${i}n${n}`))
      return i + 1 < pages.length
        ? { entries, ids, next: String(i + 1), hasMore: true }
        : { entries, ids, next: undefined, hasMore: false }
    })
  const unused = Effect.die("not read by a reply")
  const files: FileRepository.FileRepository = {
    findAccess: () => unused,
    readSubmissions,
    readChanges: () => unused,
    readContentNames: () => unused,
    findFile: () => unused,
    ping: unused,
    encodedPages: {
      readJoined: (fileId, range, form) =>
        Effect.map(readSubmissions(fileId, range), (domain) => {
          const page = EncodedPages.join(domain, form)
          const bytes = kind === "bytes" || (kind === "mixed" && range.after !== undefined)
          return bytes ? { ...page, joined: encoder.encode(EncodedPages.joinedText(page)) } : page
        }),
      readExportRows: () => unused
    }
  }
  return { file: { ...file, readPoint: FileRepository.ReadPoint("0") }, files }
}

/** The reply with each joined page it reads passed through `f`. */
const withJoined = (
  reply: FileDataReply.FileDataReply,
  f: (
    page: Effect.Effect<EncodedPages.JoinedPage, StorageUnavailable>
  ) => Effect.Effect<EncodedPages.JoinedPage, StorageUnavailable>
): FileDataReply.FileDataReply => {
  const pages = EncodedPages.of(reply.files)
  return {
    ...reply,
    files: {
      ...reply.files,
      encodedPages: { ...pages, readJoined: (id, range, form) => f(pages.readJoined(id, range, form)) }
    }
  }
}

const decoder = new TextDecoder()

const encodeToPieces = (reply: FileDataReply.FileDataReply) =>
  Stream.runCollect(FileDataEncoder.encode(reply)).pipe(Effect.map(Chunk.toReadonlyArray))

describe("FileDataEncoder", () => {
  it.prop(
    "encode writes exactly the reply, whatever the names, contents and pages",
    {
      file: storedFile,
      rows: FastCheck.array(storedSubmission, { maxLength: 8 }),
      sizes: FastCheck.array(FastCheck.nat(3), { maxLength: 6 })
    },
    ({ file, rows, sizes }) =>
      Effect.runSync(
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
          // A one-page reply is a single write.
          if (pages.length === 1) expect(pieces).toHaveLength(1)

          const collected = yield* FileDataReply.toFileData(replyOf(file, pages))
          expect(Object.keys(collected)).toEqual(FIELDS)
          expect(collected).toEqual(parsed)
          collected.submissions.forEach((submission, i) => {
            expect(Object.keys(submission.content)).toEqual(Object.keys(parsed.submissions[i].content))
          })
        })
      ),
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
    "SubmissionEntry.render writes the instant in reply form and the content as stored",
    [instant, contentJson],
    ([millis, content]) => {
      const rendered = SubmissionEntry.render(millis, content)
      expect(JSON.parse(rendered)).toEqual({
        createdDate: timestampFromEpochMillis(millis),
        content: JSON.parse(content)
      })
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
      const reply = withJoined(base, (page) =>
        Effect.zipLeft(
          page,
          Effect.sync(() => reads++)
        )
      )
      const first = yield* Stream.runCollect(Stream.take(FileDataEncoder.encode(reply), 1))
      expect(Chunk.size(first)).toBe(1)
      expect(reads).toBe(1)
    })
  )

  it.effect(
    "a reply of one page is one piece of bytes; a longer one writes each page's bytes as storage joined them",
    () =>
      Effect.gen(function* () {
        const row = (n: number): StoredSubmission => ({
          createdDate: timestampFromEpochMillis(n),
          contentJson: JSON.stringify({ n: String(n), text: "é😀" })
        })
        const writeAll = (reply: FileDataReply.FileDataReply) =>
          Effect.gen(function* () {
            const written: Array<readonly [string | Uint8Array, boolean]> = []
            yield* FileDataEncoder.writeTo(reply, (piece, last) => Effect.sync(() => written.push([piece, last])))
            return written
          })
        const text = (piece: string | Uint8Array) => (typeof piece === "string" ? piece : decoder.decode(piece))

        for (const kind of ["text", "bytes"] as const) {
          const one = yield* writeAll(replyOf(file, paged([row(0), row(1)], []), kind))
          expect(one).toHaveLength(1)
          expect(typeof one[0]?.[0]).toBe(kind === "text" ? "string" : "object")
          expect(one[0]?.[1]).toBe(true)
          expect(JSON.parse(text(one[0]?.[0] as string | Uint8Array)).submissions).toHaveLength(2)
        }

        const rows = Array.from({ length: 7 }, (_, n) => row(n))
        const base = replyOf(file, paged(rows, [3, 0, 2]), "bytes")
        const joined: Array<string | Uint8Array> = []
        const reply = withJoined(base, (page) => Effect.tap(page, (read) => joined.push(read.joined)))
        const written = yield* writeAll(reply)
        expect(JSON.parse(written.map(([piece]) => text(piece)).join("")).submissions).toEqual(
          rows.map((row) => ({ createdDate: row.createdDate, content: JSON.parse(row.contentJson) }))
        )
        expect(written.map(([, last]) => last)).toEqual(written.map((_, i) => i === written.length - 1))
        // Not copied: the pieces of bytes are the pages storage gave, the empty one left out.
        const bytes = written.map(([piece]) => piece).filter((piece) => typeof piece !== "string")
        expect(bytes).toHaveLength(3)
        const pages = joined.filter((page) => page.length > 0)
        for (const [i, piece] of bytes.entries()) expect(piece).toBe(pages[i])
      })
  )
})
