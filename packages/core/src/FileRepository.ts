/**
 * The port through which the core reads files, their owners and their submissions.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import type { ApiKey, FileId, StoredFile, StoredSubmission, UserId } from "./FileData.js"
import type { StorageUnavailable } from "./FileDataError.js"

/**
 * Read access to stored files.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileRepository {
  /** The user owning this key, if the key exists and is not revoked. */
  readonly findKeyOwner: (apiKey: ApiKey) => Effect.Effect<Option.Option<UserId>, StorageUnavailable>
  readonly findFile: (fileId: FileId) => Effect.Effect<Option.Option<StoredFile>, StorageUnavailable>
  /**
   * Every submission of the file, ascending by `createdDate`, ties in insertion order. Adapters read it in
   * bounded pages, so a reply of a million submissions never sits whole in memory.
   */
  readonly submissions: (fileId: FileId) => Stream.Stream<StoredSubmission, StorageUnavailable>
  /** Succeeds when storage answers; used by health checks. */
  readonly ping: Effect.Effect<void, StorageUnavailable>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const FileRepository: Context.Tag<FileRepository, FileRepository> = Context.GenericTag<FileRepository>(
  "@filedata/core/FileRepository"
)
