/**
 * The body of a change feed reply, `{"changes":[…],"next":"…","hasMore":…}`, written page by page: a page the
 * adapter joined as it came (text, or UTF-8 bytes when long), as `SubmissionsEncoder` writes the incremental
 * read's; a domain page change by change (`EncodedPages.changeText`, the stored entry spliced in, not encoded
 * again), in pieces of the length the transport asks, a page a piece when it asks none.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import * as EncodedPages from "../shared/EncodedPages.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import type * as Immediate from "../shared/Immediate.js"
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

// The pieces of a page between `before` and `after`: a joined page as it came; a domain page in pieces of about
// `pieceLength`, where joining it here would make one long string a page, which measured more memory than
// the pieces (docs/performance.md#feed-pages-joined-in-storage).
const around = (page: ChangesReply.Page, before: string, after: string, whole: boolean, pieceLength: number) =>
  "joined" in page
    ? Pieces.aroundJoined(before, page.joined, after, whole)
    : Pieces.pieces(page.changes.map(EncodedPages.changeText), before, after, pieceLength)

// Reads one page and gives it as the next pieces of the reply, between the head before the first and the tail
// after the last; no next position after the last page.
const step = (
  reply: ChangesReply.ChangesReply,
  position: Position,
  pieceLength: number
): Effect.Effect<readonly [pieces: Array<string | Uint8Array>, next: Position | undefined], StorageUnavailable> =>
  Effect.map(ChangesReply.step(reply, position.progress), (read) => {
    const count = ChangesReply.countOf(read.page)
    const before = (position.first ? head : "") + (position.empty || count === 0 ? "" : ",")
    return read.end === undefined
      ? [
          around(read.page, before, "", false, pieceLength),
          { progress: read.progress, first: false, empty: position.empty && count === 0 }
        ]
      : [around(read.page, before, tail(read.end.next, read.end.hasMore), position.first, pieceLength), undefined]
  })

const begin = (reply: ChangesReply.ChangesReply): Position => ({
  progress: ChangesReply.start(reply),
  first: true,
  empty: true
})

/**
 * Writes the whole reply through `write`, in pieces of text or of UTF-8 bytes, reading the next page only once
 * `write` is done with the last: the transport decides how to wait for a slow reader. A page the adapter joined
 * is written as it came; a domain page (`readChanges`') in pieces of about `pieceLength` UTF-16 code units (a
 * change is never split, so a longer one makes a longer piece), or as one piece when no length is given. A reply
 * of one short page is one piece, `last`.
 *
 * @since 0.3.0
 * @category encoding
 */
export const writeTo = <E2, R>(
  reply: ChangesReply.ChangesReply,
  write: (piece: string | Uint8Array, last: boolean) => Effect.Effect<void, E2, R>,
  pieceLength: number = Number.POSITIVE_INFINITY
): Immediate.Immediate<void, StorageUnavailable | E2, R> =>
  Pieces.writeAll(begin(reply), (position: Position) => step(reply, position, pieceLength), write)

/**
 * The whole reply as a stream of text pieces, cut as {@link writeTo} cuts them; pages are read as the stream is
 * pulled.
 *
 * @since 0.3.0
 * @category encoding
 */
export const encode = (
  reply: ChangesReply.ChangesReply,
  pieceLength: number = Number.POSITIVE_INFINITY
): Stream.Stream<string, StorageUnavailable> =>
  Pieces.stream(begin(reply), (position: Position) => step(reply, position, pieceLength))
