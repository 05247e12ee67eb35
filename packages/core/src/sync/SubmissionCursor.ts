/**
 * The cursor of an incremental read: the `next` of a reply, which a later request for the same file sends back
 * as `after` to continue where the reply ended. Opaque, URL-safe text (base64url) that carries the storage
 * adapter's position bound to the file by a checksum of both: a cursor of another file, a truncated or altered
 * one, or any other text is refused. The checksum holds no secret, so it guards against mistakes, not forgers;
 * a forged cursor still names only a position in the file's own range, since storage reads no other file's
 * submissions (`FileRepository.readSubmissions`).
 *
 * @since 0.1.0
 */
import type * as Brand from "effect/Brand"
import * as Encoding from "effect/Encoding"
import * as Option from "effect/Option"
import type { FileId } from "../shared/FileData.js"

/**
 * The text of a cursor.
 *
 * @since 0.1.0
 * @category models
 */
export type SubmissionCursor = string & Brand.Brand<"SubmissionCursor">

// The layout: this version tag, the checksum in 16 hex digits, the position. A new layout gets a new tag.
const VERSION = "1"
const HEADER_LENGTH = VERSION.length + 16

const hex = (n: number): string => (n >>> 0).toString(16).padStart(8, "0")

// 64 bits from two 32-bit lanes mixed per UTF-16 code unit (after cyrb53): plain arithmetic, since the core
// has no crypto, and plenty to tell files and positions apart.
const checksum = (text: string): string => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ unit, 2654435761)
    h2 = Math.imul(h2 ^ unit, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return hex(h1) + hex(h2)
}

/**
 * The cursor of `position` (an adapter's position) in the file `fileId`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const encode = (fileId: FileId, position: string): SubmissionCursor =>
  // The id's length comes first, so no other split of the same text into id and position has the same sum.
  Encoding.encodeBase64Url(
    `${VERSION}${checksum(`${fileId.length}:${fileId}${position}`)}${position}`
  ) as SubmissionCursor

/**
 * The position a cursor carries, if `cursor` is, to the character, a cursor {@link encode} made for the file
 * `fileId`; none for a cursor of another file or any other text.
 *
 * @since 0.1.0
 * @category destructors
 */
export const decode = (fileId: FileId, cursor: string): Option.Option<string> => {
  const text = Encoding.decodeBase64UrlString(cursor)
  if (text._tag === "Left" || text.right.length < HEADER_LENGTH || !text.right.startsWith(VERSION)) {
    return Option.none()
  }
  const position = text.right.slice(HEADER_LENGTH)
  // Made again and compared whole: this checks the sum, and refuses every other spelling of the same bytes
  // (line breaks, padding, stray bits, text that is not UTF-8).
  return encode(fileId, position) === cursor ? Option.some(position) : Option.none()
}
