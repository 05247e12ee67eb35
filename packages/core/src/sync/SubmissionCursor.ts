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
import type * as Option from "effect/Option"
import type { FileId } from "../shared/FileData.js"
import * as Cursor from "../shared/internal/cursor.js"

/**
 * The text of a cursor.
 *
 * @since 0.1.0
 * @category models
 */
export type SubmissionCursor = string & Brand.Brand<"SubmissionCursor">

// The layout's tag; the change feed's cursors have another (`ChangeCursor`).
const layout = Cursor.make("1")

/**
 * The cursor of `position` (an adapter's position) in the file `fileId`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const encode = (fileId: FileId, position: string): SubmissionCursor =>
  layout.encode(fileId, position) as SubmissionCursor

/**
 * The position a cursor carries, if `cursor` is, to the character, a cursor {@link encode} made for the file
 * `fileId`; none for a cursor of another file or any other text.
 *
 * @since 0.1.0
 * @category destructors
 */
export const decode = (fileId: FileId, cursor: string): Option.Option<string> => layout.decode(fileId, cursor)
