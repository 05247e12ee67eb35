/**
 * The body of an incremental read, `{"submissions":[…],"next":"…","hasMore":…}`, written as JSON text piece by
 * piece, in the same bounded pieces as `FileDataEncoder`, so a reply of 10,000 submissions is never one string.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import * as Pieces from "../shared/internal/pieces.js"
import type { SubmissionCursor } from "./SubmissionCursor.js"
import * as SubmissionsReply from "./SubmissionsReply.js"

/**
 * Everything before the first submission.
 *
 * @since 0.1.0
 * @category encoding
 */
export const head = '{"submissions":['

/**
 * Closes the submissions array, then `next` and `hasMore` and the object. A cursor is base64url, which JSON
 * text holds unescaped.
 *
 * @since 0.1.0
 * @category encoding
 */
export const tail = (next: SubmissionCursor, hasMore: boolean): string => `],"next":"${next}","hasMore":${hasMore}}`

// Where the writing stands between pages: where the reading stands, and whether the head is still to come and
// a submission was written (for the comma).
interface Position {
  readonly progress: SubmissionsReply.Progress
  readonly first: boolean
  readonly empty: boolean
}

// Reads one page and renders it as the next pieces of the reply; no next position after the last page.
const step = (
  reply: SubmissionsReply.SubmissionsReply,
  position: Position
): Effect.Effect<readonly [pieces: Array<string>, next: Position | undefined], StorageUnavailable> =>
  Effect.map(SubmissionsReply.step(reply, position.progress), (page) => {
    const { entries } = page
    const before = (position.first ? head : "") + (position.empty || entries.length === 0 ? "" : ",")
    return page.end === undefined
      ? [
          Pieces.pieces(entries, before, ""),
          { progress: page.progress, first: false, empty: position.empty && entries.length === 0 }
        ]
      : [Pieces.pieces(entries, before, tail(page.end.next, page.end.hasMore)), undefined]
  })

const begin = (reply: SubmissionsReply.SubmissionsReply): Position => ({
  progress: SubmissionsReply.start(reply),
  first: true,
  empty: true
})

const body = Pieces.body(begin, step)

/**
 * Writes the whole reply through `write`, piece by piece (about `FileDataEncoder.maxPieceLength` each), reading the
 * next page only once `write` is done with the last: the transport decides how to wait for a slow reader, with
 * the same `write` it gives `FileDataEncoder.writeTo`. A reply of one short page is one piece, `last`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const writeTo = body.writeTo

/**
 * The whole reply as a stream of text pieces; pages are read as the stream is pulled.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = body.encode
