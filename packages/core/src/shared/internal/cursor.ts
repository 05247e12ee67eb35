/**
 * Cursors as the incremental read and the change feed hand them out: opaque, URL-safe text (base64url) carrying
 * a version tag, a checksum of the file's id and the position, and the storage adapter's position. The tag
 * tells the kinds apart, so a cursor of one is refused by the other.
 *
 * @internal
 */
import * as Encoding from "effect/Encoding"
import * as Option from "effect/Option"
import type { FileId } from "../FileData.js"

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
 * Encoding and decoding for cursors of the layout `tag`, the checksum in 16 hex digits, the position. A new
 * layout or a new kind gets a new tag.
 *
 * @internal
 */
export const make = (tag: string) => {
  const headerLength = tag.length + 16
  const encode = (fileId: FileId, position: string): string =>
    // The id's length comes first, so no other split of the same text into id and position has the same sum.
    Encoding.encodeBase64Url(`${tag}${checksum(`${fileId.length}:${fileId}${position}`)}${position}`)
  const decode = (fileId: FileId, cursor: string): Option.Option<string> => {
    const text = Encoding.decodeBase64UrlString(cursor)
    if (text._tag === "Left" || text.right.length < headerLength || !text.right.startsWith(tag)) {
      return Option.none()
    }
    const position = text.right.slice(headerLength)
    // Made again and compared whole: this checks the sum, and refuses every other spelling of the same bytes
    // (line breaks, padding, stray bits, text that is not UTF-8).
    return encode(fileId, position) === cursor ? Option.some(position) : Option.none()
  }
  return { encode, decode } as const
}
