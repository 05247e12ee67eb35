import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as ChangeCursor from "../../src/changes/ChangeCursor.js"
import * as ChangesEncoder from "../../src/changes/ChangesEncoder.js"
import * as ChangesReply from "../../src/changes/ChangesReply.js"
import * as EncodedPages from "../../src/shared/EncodedPages.js"
import { type FileId, type StoredFile, timestampFromEpochMillis, type UserId } from "../../src/shared/FileData.js"
import type * as FileRepository from "../../src/shared/FileRepository.js"
import * as SubmissionEntry from "../../src/shared/SubmissionEntry.js"
import * as SubmissionId from "../../src/shared/SubmissionId.js"

const file: StoredFile = {
  id: "f" as FileId,
  ownerId: "u" as UserId,
  name: "F",
  creationDate: timestampFromEpochMillis(0),
  publicAvailability: false,
  SubmissionCounter: 0,
  VisitCounter: 0
}

// Every third change an erasure; the others carry content that needs escaping.
const change = (n: number, padding = 0): FileRepository.Change =>
  n % 3 === 2
    ? { type: "submission.erased", id: SubmissionId.unsafeStored(`sub_${n - 1}`) }
    : {
        type: "submission.created",
        id: SubmissionId.unsafeStored(`sub_${n}`),
        entry: SubmissionEntry.render(
          n,
          JSON.stringify({ n: String(n), 'q"\n': "é😀\u2028", pad: "x".repeat(padding) })
        )
      }

const expected = (n: number, padding = 0) => {
  const found = change(n, padding)
  return found.type === "submission.erased"
    ? { type: found.type, id: found.id }
    : { type: found.type, id: found.id, ...JSON.parse(found.entry) }
}

/**
 * A reply of at most `limit` of `count` changes (positions are indexes), its pages joined as an adapter joins them
 * or the domain's; the size of each read is noted.
 */
const replyOf = (count: number, limit: number, padding = 0, joined = true) => {
  const reads: Array<number> = []
  const reply: ChangesReply.ChangesReply = {
    file,
    limit,
    changePage: (after, size) =>
      Effect.sync(() => {
        reads.push(size)
        const from = after === undefined ? 0 : Number(after)
        const to = Math.min(count, from + size)
        const page: FileRepository.ChangePage = {
          changes: Array.from({ length: to - from }, (_, i) => change(from + i, padding)),
          next: String(to),
          hasMore: to < count
        }
        return joined ? EncodedPages.joinChanges(page) : page
      })
  }
  return { reply, reads }
}

const written = (reply: ChangesReply.ChangesReply, pieceLength?: number) =>
  Effect.gen(function* () {
    const pieces: Array<readonly [string | Uint8Array, boolean]> = []
    yield* ChangesEncoder.writeTo(reply, (piece, last) => Effect.sync(() => pieces.push([piece, last])), pieceLength)
    return pieces
  })

const decoder = new TextDecoder()

const text = (pieces: ReadonlyArray<readonly [string | Uint8Array, boolean]>) =>
  pieces.map(([piece]) => (typeof piece === "string" ? piece : decoder.decode(piece))).join("")

describe("ChangesEncoder", () => {
  it.prop(
    "writes exactly the reply: the changes in order, type and id first, its cursor and hasMore last",
    {
      count: FastCheck.nat(2600),
      limit: FastCheck.integer({ min: 1, max: 3000 }),
      joined: FastCheck.boolean(),
      pieceLength: FastCheck.option(FastCheck.integer({ min: 1, max: 20_000 }), { nil: undefined })
    },
    ({ count, limit, joined, pieceLength }) =>
      Effect.runSync(
        Effect.gen(function* () {
          const { reply, reads } = replyOf(count, limit, 0, joined)
          const pieces = yield* written(reply, pieceLength)
          const whole = text(pieces)
          const parsed = JSON.parse(whole)
          const held = Math.min(count, limit)
          expect(Object.keys(parsed)).toEqual(["changes", "next", "hasMore"])
          expect(parsed.changes).toEqual(Array.from({ length: held }, (_, n) => expected(n)))
          for (const each of parsed.changes) expect(Object.keys(each).slice(0, 2)).toEqual(["type", "id"])
          expect(parsed.hasMore).toBe(count > limit)
          expect(ChangeCursor.decode(file.id, parsed.next)).toEqual(Option.some(String(held)))
          expect(pieces.map(([, last]) => last)).toEqual(pieces.map((_, i) => i === pieces.length - 1))
          expect(reads.every((size) => size <= ChangesReply.pageLimit)).toBe(true)
          expect(reads.reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(limit)

          // The same value as the reply read whole, and the same text as the stream.
          expect(yield* ChangesReply.toChangesPage(replyOf(count, limit, 0, joined).reply)).toEqual(parsed)
          // A joined page is the domain page's text, so both write the same reply.
          expect(text(yield* written(replyOf(count, limit, 0, !joined).reply, pieceLength))).toBe(whole)
          const streamed = yield* Stream.runCollect(
            ChangesEncoder.encode(replyOf(count, limit, 0, joined).reply, pieceLength)
          )
          expect(Chunk.join(streamed, "")).toBe(whole)
        })
      ),
    { fastCheck: { numRuns: 30 } }
  )

  it("writes a change as the contract shows it, the stored entry spliced in as it is", () => {
    const entry = SubmissionEntry.render(0, '{"a":"\\u00e9"}')
    const id = SubmissionId.unsafeStored("sub_x")
    expect(EncodedPages.changeText({ type: "submission.created", id, entry })).toBe(
      '{"type":"submission.created","id":"sub_x","createdDate":"1970-01-01T00:00:00.000Z","content":{"a":"\\u00e9"}}'
    )
    expect(EncodedPages.changeText({ type: "submission.erased", id })).toBe('{"type":"submission.erased","id":"sub_x"}')
  })

  it.effect("a reply of nothing is one piece: no changes, the cursor it started from, no more", () =>
    Effect.gen(function* () {
      expect(yield* written(replyOf(0, 10).reply)).toEqual([
        [`{"changes":[],"next":"${ChangeCursor.encode(file.id, "0")}","hasMore":false}`, true]
      ])
    })
  )

  it.effect("10,000 changes of domain pages are written in pieces of about the length asked, never one string", () =>
    Effect.gen(function* () {
      const { reply, reads } = replyOf(12_000, 10_000, 200, false)
      const pieces = yield* written(reply, 64 * 1024)
      expect(reads).toEqual(Array.from({ length: 10 }, () => ChangesReply.pageLimit))
      // A piece ends before the change that would take it to the length, so it is shorter than one change more.
      expect(Math.max(...pieces.map(([piece]) => piece.length))).toBeLessThan(64 * 1024 + 400)
      const parsed = JSON.parse(text(pieces))
      expect(parsed.changes).toHaveLength(10_000)
      expect(parsed.hasMore).toBe(true)
    })
  )

  it.effect("with no length asked, a domain page is one piece", () =>
    Effect.gen(function* () {
      const { reply } = replyOf(2_500, 2_500, 200, false)
      const pieces = yield* written(reply)
      expect(pieces).toHaveLength(Math.ceil(2_500 / ChangesReply.pageLimit))
      expect(JSON.parse(text(pieces)).changes).toHaveLength(2_500)
      const streamed = yield* Stream.runCollect(ChangesEncoder.encode(replyOf(2_500, 2_500, 200, false).reply))
      expect(Chunk.size(streamed)).toBe(pieces.length)
    })
  )

  it.effect("10,000 changes are written page by page as storage joined them, never one string", () =>
    Effect.gen(function* () {
      const { reply, reads } = replyOf(12_000, 10_000, 200)
      const pieces = yield* written(reply)
      expect(reads).toEqual(Array.from({ length: 10 }, () => ChangesReply.pageLimit))
      // A page is a piece of its own (the head and the tail beside it when it came as bytes).
      expect(pieces.length).toBeGreaterThanOrEqual(10)
      expect(Math.max(...pieces.map(([piece]) => piece.length))).toBeLessThan(ChangesReply.pageLimit * 300)
      const parsed = JSON.parse(text(pieces))
      expect(parsed.changes).toHaveLength(10_000)
      expect(parsed.hasMore).toBe(true)
    })
  )
})
