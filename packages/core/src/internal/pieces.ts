import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { SubmissionEntry } from "../SubmissionEntry.js"

/**
 * About how long, in UTF-16 code units, the pieces a page of a reply is written in may grow.
 *
 * @internal
 */
export const maxPieceLength = 64 * 1024

/**
 * A page's entries joined by commas into pieces of about `maxPieceLength`, `before` at the start of the first
 * and `after` at the end of the last; a submission is never split, so a longer one makes a longer piece. Below
 * the size at which V8 makes a string a large object: docs/performance.md#pieces-below-the-large-object-size.
 *
 * @internal
 */
export const pieces = (entries: ReadonlyArray<SubmissionEntry>, before: string, after: string): Array<string> => {
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

/**
 * Reads a reply's pages with `step` from `start` until it gives no next position, writing each page's pieces
 * through `write`, the last one marked `last`, and reading the next page only once `write` is done with the
 * last: the transport decides how to wait for a slow reader.
 *
 * @internal
 */
export const writeAll: <P, E, E2, R>(
  start: P,
  step: (position: P) => Effect.Effect<readonly [pieces: Array<string>, next: P | undefined], E>,
  write: (piece: string, last: boolean) => Effect.Effect<void, E2, R>
) => Effect.Effect<void, E | E2, R> =
  // Made once, not per reply: docs/performance.md#generator-functions-made-once
  Effect.fnUntraced(function* <P, E, E2, R>(
    start: P,
    step: (position: P) => Effect.Effect<readonly [pieces: Array<string>, next: P | undefined], E>,
    write: (piece: string, last: boolean) => Effect.Effect<void, E2, R>
  ) {
    let position: P | undefined = start
    while (position !== undefined) {
      const [pieces, next]: readonly [Array<string>, P | undefined] = yield* step(position)
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
 * The same pages as a stream of pieces; a page is read when its pieces are pulled.
 *
 * @internal
 */
export const stream = <P, E>(
  start: P,
  step: (position: P) => Effect.Effect<readonly [pieces: Array<string>, next: P | undefined], E>
): Stream.Stream<string, E> =>
  Stream.paginateChunkEffect(start, (position) =>
    Effect.map(step(position), ([pieces, next]) => [Chunk.unsafeFromArray(pieces), Option.fromNullable(next)] as const)
  )
