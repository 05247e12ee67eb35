/**
 * The reply body, written as JSON text piece by piece so a file of any size streams in bounded memory.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { StoredFile } from "../shared/FileData.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import * as Immediate from "../shared/Immediate.js"
import * as Pieces from "../shared/internal/pieces.js"
import * as FileDataReply from "./FileDataReply.js"

/**
 * Everything before the first submission; field order follows the specification.
 *
 * @since 0.1.0
 * @category encoding
 */
export const head = (file: StoredFile): string =>
  `{"name":${JSON.stringify(file.name)},"creationDate":"${file.creationDate}",` +
  `"publicAvailability":${file.publicAvailability},"SubmissionCounter":${file.SubmissionCounter},` +
  `"VisitCounter":${file.VisitCounter},"submissions":[`

/**
 * Closes the submissions array and the object.
 *
 * @since 0.1.0
 * @category encoding
 */
export const tail = "]}"

// Where the writing stands between pages: the position to read from, whether the head is still to come,
// and whether any submission was written (for the comma).
interface Position {
  readonly after: string | undefined
  readonly first: boolean
  readonly empty: boolean
}

const start: Position = { after: undefined, first: true, empty: true }

// Reads one page and returns the next pieces of the reply: the page as storage joined it, with the head before
// the first and the tail after the last; no next position after the last page.
const step = (
  reply: FileDataReply.FileDataReply,
  position: Position
): Effect.Effect<readonly [pieces: Array<string | Uint8Array>, next: Position | undefined], StorageUnavailable> =>
  Immediate.map(FileDataReply.submissionPage(reply, position.after), (page) => {
    const before = (position.first ? head(reply.file) : "") + (position.empty || page.count === 0 ? "" : ",")
    return [
      Pieces.aroundJoined(before, page.joined, page.hasMore ? "" : tail, position.first && !page.hasMore),
      page.hasMore ? { after: page.next, first: false, empty: position.empty && page.count === 0 } : undefined
    ] as const
  })

const body = Pieces.body(() => start, step)

/**
 * Writes the whole reply through `write`, in pieces of text or of UTF-8 bytes (each page as storage joined it),
 * reading the next page only once `write` is done with the last: the transport decides how to wait for a slow
 * reader. A reply of one page is one piece, `last`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const writeTo = body.writeTo

/**
 * The whole reply as a stream of text pieces, one or more a page; pages are read as the stream is pulled.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = body.encode
