/**
 * The cursor of the change feed: the `next` of a feed reply, which a later request for the same file sends back
 * as `after`, and the `changesNext` of every webhook event. Opaque, URL-safe text bound to the file by a
 * checksum, as `SubmissionCursor` is, under a tag of its own: a cursor of the incremental read, of another file,
 * or any other text is refused.
 *
 * @since 0.3.0
 */
import type * as Brand from "effect/Brand"
import type * as Option from "effect/Option"
import type { FileId } from "../shared/FileData.js"
import * as Cursor from "../shared/internal/cursor.js"

/**
 * The text of a feed cursor.
 *
 * @since 0.3.0
 * @category models
 */
export type ChangeCursor = string & Brand.Brand<"ChangeCursor">

const layout = Cursor.make("c1")

/**
 * The cursor of `position` (an adapter's feed position) in the file `fileId`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const encode = (fileId: FileId, position: string): ChangeCursor =>
  layout.encode(fileId, position) as ChangeCursor

/**
 * The feed position a cursor carries, if `cursor` is, to the character, a cursor {@link encode} made for the
 * file `fileId`; none for a cursor of the incremental read, of another file, or any other text.
 *
 * @since 0.3.0
 * @category destructors
 */
export const decode = (fileId: FileId, cursor: string): Option.Option<string> => layout.decode(fileId, cursor)
