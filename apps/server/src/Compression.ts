/**
 * How a reply body is compressed once `ContentCoding` has chosen `br` or `gzip`: Node's own zlib, at levels
 * chosen by measurement (docs/performance.md#compressed-replies), in one call for a reply of one piece and as
 * a stream for a longer one.
 *
 * @since 0.1.0
 */

import * as zlib from "node:zlib"
import * as Effect from "effect/Effect"
import type * as ContentCoding from "./ContentCoding.js"

/**
 * A compressed coding.
 *
 * @since 0.1.0
 * @category models
 */
export type Compressed = Exclude<ContentCoding.Coding, "identity">

/**
 * Bodies shorter than this many bytes are sent as they are: compressing them saves a few hundred bytes at
 * most, for the cost of a pass through the thread pool.
 *
 * @since 0.1.0
 * @category constants
 */
export const minimumBytes = 1024

/**
 * Brotli's quality, 0 to 11.
 *
 * @since 0.1.0
 * @category constants
 */
export const brotliQuality = 1

/**
 * Brotli's window, as a power of two: the encoder's memory grows with it, the ratio on these replies does not.
 *
 * @since 0.1.0
 * @category constants
 */
export const brotliWindowBits = 18

/**
 * gzip's level, 1 to 9.
 *
 * @since 0.1.0
 * @category constants
 */
export const gzipLevel = 1

const brotliParams = (sizeHint: number): Record<number, number> => ({
  [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
  [zlib.constants.BROTLI_PARAM_QUALITY]: brotliQuality,
  [zlib.constants.BROTLI_PARAM_LGWIN]: brotliWindowBits,
  [zlib.constants.BROTLI_PARAM_SIZE_HINT]: sizeHint
})

/**
 * A compressing stream in `coding`, for a body of unknown length written piece by piece.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stream = (coding: Compressed): zlib.BrotliCompress | zlib.Gzip =>
  coding === "br" ? zlib.createBrotliCompress({ params: brotliParams(0) }) : zlib.createGzip({ level: gzipLevel })

/**
 * `body` compressed in `coding` in one call, on the thread pool.
 *
 * @since 0.1.0
 * @category compressing
 */
export const whole = (coding: Compressed, body: Uint8Array): Effect.Effect<Buffer> =>
  Effect.async<Buffer>((resume) => {
    const done = (error: Error | null, compressed: Buffer) =>
      resume(error === null ? Effect.succeed(compressed) : Effect.die(error))
    if (coding === "br") zlib.brotliCompress(body, { params: brotliParams(body.length) }, done)
    else zlib.gzip(body, { level: gzipLevel }, done)
  })
