import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as EncodedPages from "../../src/shared/EncodedPages.js"
import { type FileId, type StoredFile, timestampFromEpochMillis, type UserId } from "../../src/shared/FileData.js"
import type * as FileRepository from "../../src/shared/FileRepository.js"
import * as SubmissionEntry from "../../src/shared/SubmissionEntry.js"
import * as SubmissionId from "../../src/shared/SubmissionId.js"
import * as SubmissionCursor from "../../src/sync/SubmissionCursor.js"
import * as SubmissionsEncoder from "../../src/sync/SubmissionsEncoder.js"
import * as SubmissionsReply from "../../src/sync/SubmissionsReply.js"

const file: StoredFile = {
  id: "f" as FileId,
  ownerId: "u" as UserId,
  name: "F",
  creationDate: timestampFromEpochMillis(0),
  publicAvailability: false,
  SubmissionCounter: 0,
  VisitCounter: 0
}

const entry = (n: number, padding = 0) =>
  SubmissionEntry.render(n, JSON.stringify({ n: String(n), pad: "x".repeat(padding) }))

const idOf = (n: number) => SubmissionId.unsafeStored(`sub_${n}`)

/** A reply of at most `limit` of `count` submissions (positions are indexes); the size of each read is noted. */
const replyOf = (count: number, limit: number, padding = 0) => {
  const reads: Array<number> = []
  const reply: SubmissionsReply.SubmissionsReply = {
    file,
    limit,
    submissionPage: (after, size) =>
      Effect.sync(() => {
        reads.push(size)
        const from = after === undefined ? 0 : Number(after)
        const to = Math.min(count, from + size)
        const page: FileRepository.SubmissionPage = {
          entries: Array.from({ length: to - from }, (_, i) => entry(from + i, padding)),
          ids: Array.from({ length: to - from }, (_, i) => idOf(from + i)),
          next: String(to),
          hasMore: to < count
        }
        // Every other page as UTF-8 bytes, as an adapter hands over a long one.
        const joined = EncodedPages.join(page, "withId")
        return reads.length % 2 === 1
          ? joined
          : { ...joined, joined: new TextEncoder().encode(EncodedPages.joinedText(joined)) }
      })
  }
  return { reply, reads }
}

const decoder = new TextDecoder()

const written = (reply: SubmissionsReply.SubmissionsReply) =>
  Effect.gen(function* () {
    const pieces: Array<readonly [string, boolean]> = []
    yield* SubmissionsEncoder.writeTo(reply, (piece, last) =>
      Effect.sync(() => pieces.push([typeof piece === "string" ? piece : decoder.decode(piece), last]))
    )
    return pieces
  })

describe("SubmissionsEncoder", () => {
  it.prop(
    "writes exactly the reply, in reply order, its cursor and hasMore last, in pages of at most the page limit",
    { count: FastCheck.nat(2600), limit: FastCheck.integer({ min: 1, max: 3000 }) },
    ({ count, limit }) =>
      Effect.runSync(
        Effect.gen(function* () {
          const { reply, reads } = replyOf(count, limit)
          const pieces = yield* written(reply)
          const text = pieces.map(([piece]) => piece).join("")
          const parsed = JSON.parse(text)
          const held = Math.min(count, limit)
          expect(Object.keys(parsed)).toEqual(["submissions", "next", "hasMore"])
          // Each submission with its id first.
          expect(parsed.submissions).toEqual(
            Array.from({ length: held }, (_, n) => ({ id: idOf(n), ...JSON.parse(entry(n)) }))
          )
          expect(parsed.submissions.every((submission: object) => Object.keys(submission)[0] === "id")).toBe(true)
          expect(parsed.hasMore).toBe(count > limit)
          expect(SubmissionCursor.decode(file.id, parsed.next)).toEqual(Option.some(String(held)))
          expect(pieces.map(([, last]) => last)).toEqual(pieces.map((_, i) => i === pieces.length - 1))
          expect(reads.every((size) => size <= SubmissionsReply.pageLimit)).toBe(true)
          expect(reads.reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(limit)

          // The same value as the reply read whole, and the same text as the stream.
          expect(yield* SubmissionsReply.toSubmissionsPage(replyOf(count, limit).reply)).toEqual(parsed)
          const streamed = yield* Stream.runCollect(SubmissionsEncoder.encode(replyOf(count, limit).reply))
          expect(Chunk.join(streamed, "")).toBe(text)
        })
      ),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect("a reply of nothing is one piece: no submissions, the cursor it started from, no more", () =>
    Effect.gen(function* () {
      const pieces = yield* written(replyOf(0, 10).reply)
      expect(pieces).toEqual([
        [`{"submissions":[],"next":"${SubmissionCursor.encode(file.id, "0")}","hasMore":false}`, true]
      ])
    })
  )

  it.effect("10,000 submissions are written page by page as storage joined them, never one string", () =>
    Effect.gen(function* () {
      const { reply, reads } = replyOf(12_000, 10_000, 200)
      const pieces = yield* written(reply)
      expect(reads).toEqual(Array.from({ length: 10 }, () => SubmissionsReply.pageLimit))
      // A page is a piece of its own (the head and the tail beside it when it came as bytes).
      expect(pieces.length).toBeGreaterThanOrEqual(10)
      const longest = Math.max(...pieces.map(([piece]) => piece.length))
      expect(longest).toBeLessThan(SubmissionsReply.pageLimit * 300)
      const parsed = JSON.parse(pieces.map(([piece]) => piece).join(""))
      expect(parsed.submissions).toHaveLength(10_000)
      expect(parsed.hasMore).toBe(true)
    })
  )

  it.effect("the stream reads a page only when its pieces are pulled", () =>
    Effect.gen(function* () {
      const { reply, reads } = replyOf(5000, 5000)
      const first = yield* Stream.runCollect(Stream.take(SubmissionsEncoder.encode(reply), 1))
      expect(Chunk.size(first)).toBe(1)
      expect(reads).toHaveLength(1)
    })
  )
})
