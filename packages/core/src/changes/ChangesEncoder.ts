/**
 * The body of a change feed reply, `{"changes":[…],"next":"…","hasMore":…}`, written page by page as
 * `SubmissionsEncoder` writes the incremental read: each page as storage joined it (text, or UTF-8 bytes when
 * long; each change as `EncodedPages.changeText`), so a reply of 10,000 changes is never one string.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import * as Pieces from "../shared/internal/pieces.js"
import type { ChangeCursor } from "./ChangeCursor.js"
import * as ChangesReply from "./ChangesReply.js"

/**
 * Everything before the first change.
 *
 * @since 0.3.0
 * @category encoding
 */
export const head = '{"changes":['

/**
 * Closes the changes array, then `next` and `hasMore` and the object. A cursor is base64url, which JSON text
 * holds unescaped.
 *
 * @since 0.3.0
 * @category encoding
 */
export const tail = (next: ChangeCursor, hasMore: boolean): string => `],"next":"${next}","hasMore":${hasMore}}`

// Where the writing stands between pages: where the reading stands, and whether the head is still to come and
// a change was written (for the comma).
interface Position {
  readonly progress: ChangesReply.Progress
  readonly first: boolean
  readonly empty: boolean
}

// Reads one page and gives it as the next pieces of the reply, between the head before the first and the tail
// after the last; no next position after the last page.
const step = (
  reply: ChangesReply.ChangesReply,
  position: Position
): Effect.Effect<readonly [pieces: Array<string | Uint8Array>, next: Position | undefined], StorageUnavailable> =>
  Effect.map(ChangesReply.step(reply, position.progress), (read) => {
    const { count, joined } = read.page
    const before = (position.first ? head : "") + (position.empty || count === 0 ? "" : ",")
    return read.end === undefined
      ? [
          Pieces.aroundJoined(before, joined, "", false),
          { progress: read.progress, first: false, empty: position.empty && count === 0 }
        ]
      : [Pieces.aroundJoined(before, joined, tail(read.end.next, read.end.hasMore), position.first), undefined]
  })

const begin = (reply: ChangesReply.ChangesReply): Position => ({
  progress: ChangesReply.start(reply),
  first: true,
  empty: true
})

const body = Pieces.body(begin, step)

/**
 * Writes the whole reply through `write`, in pieces of text or of UTF-8 bytes (each page as storage joined it),
 * reading the next page only once `write` is done with the last: the transport decides how to wait for a slow
 * reader. A reply of one page is one piece, `last`.
 *
 * @since 0.3.0
 * @category encoding
 */
export const writeTo = body.writeTo

/**
 * The whole reply as a stream of text pieces; pages are read as the stream is pulled.
 *
 * @since 0.3.0
 * @category encoding
 */
export const encode = body.encode
