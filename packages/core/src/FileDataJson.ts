/**
 * The reply body, written as JSON text piece by piece so a file of any size streams in bounded memory.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { StoredFile } from "./FileData.js"
import type { StorageUnavailable } from "./FileDataError.js"
import type { FileDataReply } from "./FileDataReply.js"
import type { SubmissionEntry } from "./SubmissionEntry.js"

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

/**
 * About how long, in UTF-16 code units, the pieces a page is written in may grow; a submission is never
 * split, so a longer one makes a longer piece.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPieceLength = 64 * 1024

// A page's entries joined into pieces of about `maxPieceLength`, below the 128 KiB above which V8 allocates
// a string as a large object (a page of 1,000 entries is about 230 KB). Measured on a huge reply through the
// HTTP route: about 1.0 s to the last byte instead of 2.0 s with one string per page, and 18 instead of
// 30 MiB above a fresh server's idle (docs/performance.md, items 16 and 17).
const pieces = (entries: ReadonlyArray<SubmissionEntry>, before: string, after: string): Array<string> => {
  const out: Array<string> = []
  let piece = before
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as SubmissionEntry
    if (piece.length > 0 && piece.length + entry.length >= maxPieceLength) {
      out.push(piece)
      piece = ""
    }
    piece += i === 0 ? entry : `,${entry}`
  }
  piece += after
  if (piece.length > 0 || out.length === 0) out.push(piece)
  return out
}

// Reads one page and renders it as the next pieces of the reply; no next position after the last page.
const step = (
  reply: FileDataReply,
  position: Position
): Effect.Effect<readonly [pieces: Array<string>, next: Position | undefined], StorageUnavailable> =>
  Effect.map(reply.submissionPage(position.after), (page) => {
    const { entries } = page
    const before = (position.first ? head(reply.file) : "") + (position.empty || entries.length === 0 ? "" : ",")
    return [
      pieces(entries, before, page.next === undefined ? tail : ""),
      page.next === undefined
        ? undefined
        : { after: page.next, first: false, empty: position.empty && entries.length === 0 }
    ] as const
  })

/**
 * Writes the whole reply through `write`, piece by piece (see {@link maxPieceLength}), reading the next page
 * only once `write` is done with the last: the transport decides how to wait for a slow reader. A reply of
 * one short page is one piece, `last`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const writeTo: <E, R>(
  reply: FileDataReply,
  write: (piece: string, last: boolean) => Effect.Effect<void, E, R>
) => Effect.Effect<void, E | StorageUnavailable, R> = Effect.fnUntraced(function* <E, R>(
  reply: FileDataReply,
  write: (piece: string, last: boolean) => Effect.Effect<void, E, R>
) {
  // A generator function made per call would cost a prototype and a hidden class per reply (see
  // GetFileData.runWith); this one is made once.
  let position: Position | undefined = start
  while (position !== undefined) {
    const [pieces, next]: readonly [Array<string>, Position | undefined] = yield* step(reply, position)
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i] as string
      // Let go of a piece once it is handed on: a reader that stops would otherwise keep every piece of the
      // page written so far (docs/performance.md#stalled-readers).
      pieces[i] = ""
      yield* write(piece, next === undefined && i === pieces.length - 1)
    }
    position = next
  }
})

/**
 * The whole reply as a stream of text pieces (see {@link maxPieceLength}); pages are read as the stream is
 * pulled.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (reply: FileDataReply): Stream.Stream<string, StorageUnavailable> =>
  Stream.paginateChunkEffect(start, (position) =>
    Effect.map(
      step(reply, position),
      ([pieces, next]) => [Chunk.unsafeFromArray(pieces), Option.fromNullable(next)] as const
    )
  )
