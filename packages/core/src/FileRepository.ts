/**
 * The port through which the core reads files, their owners and their submissions.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { ApiKey, FileId, StoredFile, StoredSubmission, UserId } from "./FileData.js"
import type { StorageUnavailable } from "./FileDataError.js"
import * as SubmissionEntry from "./SubmissionEntry.js"

/**
 * A bounded run of a file's submissions in reply order, each as the reply writes it (`SubmissionEntry`), and
 * where the next run starts (`undefined` after the last one). The position is the adapter's own, opaque text.
 *
 * @since 0.1.0
 * @category models
 */
export interface SubmissionPage {
  readonly entries: ReadonlyArray<SubmissionEntry.SubmissionEntry>
  readonly next: string | undefined
}

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
   * The file's submissions ascending by `createdDate`, ties in insertion order, one bounded page at a
   * time from `after` (`undefined`: the start), so a reply of a million submissions never sits whole in
   * memory. Pages rather than a `Stream`, because a stream's machinery cost more than the queries on the
   * small replies that make up most traffic.
   */
  readonly submissionPage: (
    fileId: FileId,
    after: string | undefined
  ) => Effect.Effect<SubmissionPage, StorageUnavailable>
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

/**
 * Every submission of a file as a `Stream`, one chunk per page.
 *
 * @since 0.1.0
 * @category accessors
 */
export const submissions = (
  repository: FileRepository,
  fileId: FileId
): Stream.Stream<StoredSubmission, StorageUnavailable> =>
  Stream.paginateChunkEffect(undefined as string | undefined, (after) =>
    Effect.map(
      repository.submissionPage(fileId, after),
      (page) =>
        [Chunk.unsafeFromArray(page.entries.map(SubmissionEntry.parse)), Option.fromNullable(page.next)] as const
    )
  )
