/**
 * The body writers of an operation's reply: in identity coding, written on the response with back-pressure;
 * compressed, through a compressing stream piped to it, or in one call when the body is one piece.
 *
 * @internal
 */
import type { ServerResponse } from "node:http"
import { pipeline, type Writable } from "node:stream"
import { Immediate } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Compression from "../../Compression.js"
import type { BodyKind, Frame, Piece } from "../Reply.js"
import * as PageCollection from "./pageCollection.js"
import { armSendTimeout, ClientGone, drainOf, finishOf } from "./replyWaits.js"

/**
 * The header fields of a success body (`Reply`'s), passed in so that this module does not import `Reply`.
 *
 * @internal
 */
export type FieldsOf = (frame: Frame, kind: BodyKind) => Record<string, string | number>

const compressedHeaders = (
  fieldsOf: FieldsOf,
  frame: Frame,
  kind: BodyKind,
  coding: Compression.Compressed
): Record<string, string | number> => {
  const fields = fieldsOf(frame, kind)
  fields["content-encoding"] = coding
  return fields
}

const byteLength = (piece: Piece): number => (typeof piece === "string" ? Buffer.byteLength(piece) : piece.byteLength)

/** @internal */
export const identityWriter = (response: ServerResponse, frame: Frame, kind: BodyKind, fieldsOf: FieldsOf) => {
  // Made once, when a reply first has to wait: a reply of one piece never does.
  let drained: Effect.Effect<void, ClientGone> | undefined
  // Written when called, so a piece the socket takes at once answers at once (`Immediate`).
  return (piece: Piece, last: boolean): Effect.Effect<void, ClientGone> => {
    if (response.destroyed) return Immediate.fail(new ClientGone())
    if (!response.headersSent) {
      const fields = fieldsOf(frame, kind)
      if (last) fields["content-length"] = byteLength(piece)
      response.writeHead(200, fields)
    }
    if (last) {
      response.end(piece)
      return Immediate.void
    }
    PageCollection.count(piece)
    if (response.write(piece)) return Immediate.void
    if (drained === undefined) {
      drained = drainOf(response)
      return Effect.zipRight(armSendTimeout(response, frame), drained)
    }
    return drained
  }
}

// One piece, long enough to be worth it: compressed in one call, sent with Content-Length.
const sendWhole = (
  response: ServerResponse,
  frame: Frame,
  kind: BodyKind,
  fieldsOf: FieldsOf,
  coding: Compression.Compressed,
  body: Uint8Array
): Effect.Effect<void, ClientGone> =>
  Effect.flatMap(Compression.whole(coding, body), (compressed) => {
    if (response.destroyed) return Effect.fail(new ClientGone())
    const fields = compressedHeaders(fieldsOf, frame, kind, coding)
    fields["content-length"] = compressed.length
    response.writeHead(200, fields)
    response.end(compressed)
    return Effect.void
  })

// Module-level: a closure made beside a piece would hold it (see `drainOf`).
const ignore = (): void => {}

// Pieces go through a compressing stream piped to the response: the stream waits while the response is
// full, the writer while the stream is (docs/performance.md#compressed-replies).
/** @internal */
export const compressedWriter = (
  response: ServerResponse,
  frame: Frame,
  kind: BodyKind,
  fieldsOf: FieldsOf,
  coding: Compression.Compressed
) => {
  let compressor: Writable | undefined
  let drained: Effect.Effect<void, ClientGone> | undefined
  // Written when called, as `identityWriter`.
  return (piece: Piece, last: boolean): Effect.Effect<void, ClientGone> => {
    if (response.destroyed) return Immediate.fail(new ClientGone())
    if (compressor === undefined) {
      if (last) {
        const body = typeof piece === "string" ? Buffer.from(piece) : piece
        if (body.length >= Compression.minimumBytes) return sendWhole(response, frame, kind, fieldsOf, coding, body)
        const fields = fieldsOf(frame, kind)
        fields["content-length"] = body.length
        response.writeHead(200, fields)
        response.end(body)
        return Immediate.void
      }
      response.writeHead(200, compressedHeaders(fieldsOf, frame, kind, coding))
      const stream = Compression.stream(coding)
      // Either side ending early destroys the other: a client gone frees the compressor at once.
      pipeline(stream, response, ignore)
      compressor = stream
      drained = drainOf(stream)
      const started = armSendTimeout(response, frame)
      PageCollection.count(piece)
      return stream.write(piece) ? started : Effect.zipRight(started, drained)
    }
    if (compressor.destroyed) return Immediate.fail(new ClientGone())
    if (last) {
      compressor.end(piece)
      return finishOf(response)
    }
    PageCollection.count(piece)
    return compressor.write(piece) ? Immediate.void : (drained as Effect.Effect<void, ClientGone>)
  }
}
