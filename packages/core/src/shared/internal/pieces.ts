import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Immediate from "../Immediate.js"

/**
 * A page's entries joined by commas into pieces of about `pieceLength` UTF-16 code units, `before` at the start
 * of the first and `after` at the end of the last; an entry is never split, so a longer one makes a longer
 * piece. With no length (`Infinity`) the page is one piece.
 *
 * @internal
 */
export const pieces = (
  entries: ReadonlyArray<string>,
  before: string,
  after: string,
  pieceLength: number
): Array<string> => {
  const out: Array<string> = []
  let piece = before
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as string
    if (piece.length > 0 && piece.length + entry.length >= pieceLength) {
      out.push(piece)
      piece = ""
    }
    piece += i === 0 ? entry : `,${entry}`
  }
  piece += after
  if (piece.length > 0 || out.length === 0) out.push(piece)
  return out
}

const encoder = new TextEncoder()

/**
 * A page joined in storage, between `before` and `after`, as the pieces to write. A page of text is one piece
 * with them, which Node writes in one call with the header block when it is the reply. A page of bytes is one
 * piece when `whole` (the page is the reply, written with its length in one `end`); otherwise the texts and the
 * page apart, so the page is never copied, and empty pieces are left out.
 *
 * @internal
 */
export const aroundJoined = (
  before: string,
  joined: string | Uint8Array,
  after: string,
  whole: boolean
): Array<string | Uint8Array> => {
  if (typeof joined === "string") return [before + joined + after]
  if (whole) {
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    const out = new Uint8Array(3 * (before.length + after.length) + joined.length)
    let at = encoder.encodeInto(before, out).written
    out.set(joined, at)
    at += joined.length
    at += encoder.encodeInto(after, out.subarray(at)).written
    return [out.subarray(0, at)]
  }
  const out: Array<string | Uint8Array> = []
  if (before.length > 0) out.push(before)
  if (joined.length > 0) out.push(joined)
  if (after.length > 0) out.push(after)
  return out
}

/**
 * Reads a reply's pages with `step` from `start` until it gives no next position, writing each page's pieces
 * through `write`, the last one marked `last`, and reading the next page only once `write` is done with the
 * last: the transport decides how to wait for a slow reader.
 *
 * @internal
 */
export const writeAll: <P, A, E, E2, R>(
  start: P,
  step: (position: P) => Effect.Effect<readonly [pieces: Array<A | undefined>, next: P | undefined], E>,
  write: (piece: A, last: boolean) => Effect.Effect<void, E2, R>
) => Immediate.Immediate<void, E | E2, R> =
  // Stepped at once while reads and writes answer at once (`Immediate`); made once, not per reply.
  Immediate.fn(function* <P, A, E, E2, R>(
    start: P,
    step: (position: P) => Effect.Effect<readonly [pieces: Array<A | undefined>, next: P | undefined], E>,
    write: (piece: A, last: boolean) => Effect.Effect<void, E2, R>
  ) {
    let position: P | undefined = start
    while (position !== undefined) {
      const [pieces, next]: readonly [Array<A | undefined>, P | undefined] = yield* step(position)
      for (let i = 0; i < pieces.length; i++) {
        const piece = pieces[i] as A
        // Let go of a piece once it is handed on: a reader that stops would otherwise keep every piece of the
        // page written so far (docs/performance.md#stalled-readers).
        pieces[i] = undefined
        yield* write(piece, next === undefined && i === pieces.length - 1)
      }
      position = next
    }
  })

const decoder = new TextDecoder()

const text = (piece: string | Uint8Array): string => (typeof piece === "string" ? piece : decoder.decode(piece))

/**
 * A reply's pages, read with `step` from `start` as the stream is pulled, as a stream of text pieces.
 *
 * @internal
 */
export const stream = <P, A extends string | Uint8Array, E>(
  start: P,
  step: (position: P) => Effect.Effect<readonly [pieces: Array<A>, next: P | undefined], E>
): Stream.Stream<string, E> =>
  Stream.paginateChunkEffect(start, (position) =>
    Effect.map(
      step(position),
      ([pieces, next]) => [Chunk.unsafeFromArray(pieces.map(text)), Option.fromNullable(next)] as const
    )
  )

/**
 * A reply's body, read page by page with `step` from the position `begin` gives: written through a transport's
 * `write` ({@link writeAll}), or as a stream of text pieces ({@link stream}), a page read when its pieces are
 * pulled.
 *
 * @internal
 */
export const body = <Reply, P, A extends string | Uint8Array, E>(
  begin: (reply: Reply) => P,
  step: (reply: Reply, position: P) => Effect.Effect<readonly [pieces: Array<A>, next: P | undefined], E>
) => ({
  writeTo: <E2, R>(
    reply: Reply,
    write: (piece: A, last: boolean) => Effect.Effect<void, E2, R>
  ): Immediate.Immediate<void, E | E2, R> => writeAll(begin(reply), (position: P) => step(reply, position), write),
  encode: (reply: Reply): Stream.Stream<string, E> => stream(begin(reply), (position: P) => step(reply, position))
})
