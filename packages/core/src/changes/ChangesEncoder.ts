/**
 * The body of a change feed reply, `{"changes":[…],"next":"…","hasMore":…}`, written as JSON text piece by
 * piece, in the same bounded pieces as `SubmissionsEncoder`, so a reply of 10,000 changes is never one string.
 * A created change is the submission's stored entry with the change's type and id spliced in front, so no
 * content is parsed or encoded again.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import type { Change } from "../shared/FileRepository.js"
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

/**
 * One change as JSON text: `{"type":"submission.created","id":…,"createdDate":…,"content":…}` from the stored
 * entry, or `{"type":"submission.erased","id":…}`. An id is URL-safe, so it needs no escaping.
 *
 * @since 0.3.0
 * @category encoding
 */
export const changeText = (change: Change): string =>
  change.type === "submission.erased"
    ? `{"type":"submission.erased","id":"${change.id}"}`
    : `{"type":"submission.created","id":"${change.id}",${change.entry.slice(1)}`

// Where the writing stands between pages: where the reading stands, and whether the head is still to come and
// a change was written (for the comma).
interface Position {
  readonly progress: ChangesReply.Progress
  readonly first: boolean
  readonly empty: boolean
}

// Reads one page and renders it as the next pieces of the reply; no next position after the last page.
const step = (
  reply: ChangesReply.ChangesReply,
  position: Position
): Effect.Effect<readonly [pieces: Array<string>, next: Position | undefined], StorageUnavailable> =>
  Effect.map(ChangesReply.step(reply, position.progress), (page) => {
    const texts = page.changes.map(changeText)
    const before = (position.first ? head : "") + (position.empty || texts.length === 0 ? "" : ",")
    return page.end === undefined
      ? [
          Pieces.pieces(texts, before, ""),
          { progress: page.progress, first: false, empty: position.empty && texts.length === 0 }
        ]
      : [Pieces.pieces(texts, before, tail(page.end.next, page.end.hasMore)), undefined]
  })

const begin = (reply: ChangesReply.ChangesReply): Position => ({
  progress: ChangesReply.start(reply),
  first: true,
  empty: true
})

const body = Pieces.body(begin, step)

/**
 * Writes the whole reply through `write`, piece by piece (about `FileDataEncoder.maxPieceLength` each), reading
 * the next page only once `write` is done with the last: the transport decides how to wait for a slow reader.
 * A reply of one short page is one piece, `last`.
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
