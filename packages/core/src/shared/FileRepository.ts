/**
 * The port through which the core reads files, their owners and their submissions. An adapter implements
 * the members below and passes `StorageConformance`; it answers in domain terms, a file with its read point and
 * pages of submissions. One optional capability, `encodedPages` (pages joined by the adapter, `EncodedPages`),
 * lets a reply skip joining its pages: without it `EncodedPages.of` joins `readSubmissions`' pages, with the same
 * bytes on the wire. A member that can answer at once may return an `Immediate` (docs/embedding.md#answering-at-once).
 *
 * @since 0.1.0
 */
import * as Brand from "effect/Brand"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { EncodedPages } from "./EncodedPages.js"
import type { ApiKey, FileId, StoredFile, StoredSubmission, UserId } from "./FileData.js"
import type { StorageUnavailable } from "./FileDataError.js"
import * as SubmissionEntry from "./SubmissionEntry.js"
import type { SubmissionId } from "./SubmissionId.js"

/**
 * Where storage stood when a file was read, as the adapter's own opaque text: every submission stored or erased
 * by a commit before then is at or below it, every one of a later commit above it. Reads bounded by it (`upTo`) show the file as it
 * was at that moment, however many pages and turns of the event loop they take while writers append.
 *
 * @since 0.1.0
 * @category models
 */
export type ReadPoint = string & Brand.Brand<"ReadPoint">

/**
 * A read point from an adapter's text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ReadPoint: Brand.Brand.Constructor<ReadPoint> = Brand.nominal<ReadPoint>()

/**
 * A file as `findAccess` found it: what storage holds, and the read point taken in the same read, so its
 * counters and its submissions can be shown from one moment.
 *
 * @since 0.1.0
 * @category models
 */
export interface FoundFile extends StoredFile {
  readonly readPoint: ReadPoint
}

/**
 * What one read tells about a request's key and file; the core decides from it whether the key opens the file.
 *
 * @since 0.1.0
 * @category models
 */
export interface Access {
  /** The user owning the key, if the key exists and is not revoked. */
  readonly owner: Option.Option<UserId>
  /** The file with its read point, whoever owns it; always none when `owner` is none. */
  readonly file: Option.Option<FoundFile>
}

/**
 * The access of a key that matches no active key: it learns nothing of the file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noAccess: Access = { owner: Option.none(), file: Option.none() }

/**
 * Which of a file's submissions a read asks for, in reply order (ascending `createdDate`, ties in insertion
 * order): those after `after` (a position an earlier read of the same file handed out) with
 * `since <= createdDate < until` (epoch milliseconds), committed at or before `upTo`, at most `limit` of them
 * (default: the adapter's page size). Every bound is optional.
 *
 * @since 0.1.0
 * @category models
 */
export interface SubmissionRange {
  readonly after?: string | undefined
  readonly since?: number | undefined
  readonly until?: number | undefined
  readonly limit?: number | undefined
  readonly upTo?: ReadPoint | undefined
  /**
   * `false` when the caller reads nothing past the range's end (a reply of the whole file): the page that ends
   * the range may then leave `next` out, which spares the adapter looking up where the range ends
   * (docs/performance.md#end-position-only-when-asked). An adapter may ignore it and always give `next`, the
   * default.
   */
  readonly endPosition?: boolean | undefined
}

/**
 * A bounded run of a file's submissions in reply order, each as the reply writes it (`SubmissionEntry`,
 * docs/performance.md#stored-reply-entries), with its id at the same index of `ids`; `next`, the position after the last entry, or the position the
 * range started from when there is none (its `after`, else the start of its window), always given while
 * `hasMore` and otherwise unless the range asked for no `endPosition`; `hasMore`, whether the range holds more
 * past `next`. Positions are the adapter's own opaque text.
 *
 * @since 0.1.0
 * @category models
 */
export type SubmissionPage =
  | {
      readonly entries: ReadonlyArray<SubmissionEntry.SubmissionEntry>
      readonly ids: ReadonlyArray<SubmissionId>
      readonly next: string
      readonly hasMore: true
    }
  | {
      readonly entries: ReadonlyArray<SubmissionEntry.SubmissionEntry>
      readonly ids: ReadonlyArray<SubmissionId>
      readonly next: string | undefined
      readonly hasMore: false
    }

/**
 * One change of a file, as the change feed tells it: a submission stored (by an import or an append) or
 * erased. The `created` change of a submission later erased is no longer read; its `erased` change is.
 *
 * @since 0.3.0
 * @category models
 */
export type Change =
  | {
      readonly type: "submission.created"
      readonly id: SubmissionId
      readonly entry: SubmissionEntry.SubmissionEntry
    }
  | {
      readonly type: "submission.erased"
      readonly id: SubmissionId
    }

/**
 * Which of a file's changes a feed read asks for, in commit order: those after `after` (a feed position an
 * earlier read of the same file handed out; none: from the file's first change), committed at or before `upTo`,
 * at most `limit` of them (default: the adapter's page size).
 *
 * @since 0.3.0
 * @category models
 */
export interface ChangeRange {
  readonly after?: string | undefined
  readonly limit?: number | undefined
  readonly upTo?: ReadPoint | undefined
}

/**
 * A bounded run of a file's changes in commit order: a change whose write committed after another's comes after
 * it, on every instance. `next` is the feed position after the last change, or the one the range started from
 * when there is none; `hasMore`, whether the range holds more past `next`. Positions are the adapter's own
 * opaque text, and never a position of `readSubmissions`.
 *
 * @since 0.3.0
 * @category models
 */
export interface ChangePage {
  readonly changes: ReadonlyArray<Change>
  readonly next: string
  readonly hasMore: boolean
}

/**
 * Read access to stored files.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileRepository {
  /**
   * The key's owner and the file, in one read: a request's one storage round trip before its page
   * (docs/performance.md#one-access-statement). The file is looked up only through an active key, so an
   * unknown or revoked key never learns whether a file exists.
   */
  readonly findAccess: (apiKey: ApiKey, fileId: FileId) => Effect.Effect<Access, StorageUnavailable>
  /**
   * One bounded page of the file's submissions in `range`, read by a keyset seek on
   * `(file, createdDate, insertion)`, so a page costs the same at the end of a million submissions as at the
   * start and a reply never holds a file whole. Only this file's submissions are ever read, whatever the
   * position says; a position the adapter did not make names none (an empty page, `next` that position).
   * Pages rather than a `Stream`: docs/performance.md#pages-not-a-stream.
   */
  readonly readSubmissions: (
    fileId: FileId,
    range: SubmissionRange
  ) => Effect.Effect<SubmissionPage, StorageUnavailable>
  /**
   * One bounded page of the file's change feed in `range`, in commit order, read by a seek on the file's
   * changes, so a page costs the same after a million changes as at the start. Reading `after` each `next` in
   * turn sees every change exactly once and misses none, also while writers append and erase, with several
   * processes or instances on one database (docs/architecture.md#the-change-feed). Only this file's changes
   * are read; a position the adapter did not make names none.
   *
   * @since 0.3.0
   */
  readonly readChanges: (fileId: FileId, range: ChangeRange) => Effect.Effect<ChangePage, StorageUnavailable>
  /**
   * The content names of the file's submissions committed at or before `upTo`, each once, in the order the file
   * first received them (by insertion, then by position in the content): kept by every import and append in its
   * own transaction, so an export writes its CSV header without a pass over the submissions.
   *
   * @since 0.2.0
   */
  readonly readContentNames: (
    fileId: FileId,
    upTo: ReadPoint
  ) => Effect.Effect<ReadonlyArray<string>, StorageUnavailable>
  /**
   * The file and a read point, whoever owns it: for operators, who read any file without a key.
   *
   * @since 0.2.0
   */
  readonly findFile: (fileId: FileId) => Effect.Effect<Option.Option<FoundFile>, StorageUnavailable>
  /** Succeeds when storage answers; used by health checks. */
  readonly ping: Effect.Effect<void, StorageUnavailable>
  /**
   * Optional capability; a new adapter leaves it out. Pages encoded where the data is, read through
   * `EncodedPages.of`, whose default encodes the pages of `readSubmissions`.
   *
   * @since 0.2.0
   */
  readonly encodedPages?: EncodedPages | undefined
}

/**
 * @since 0.1.0
 * @category tags
 */
export const FileRepository: Context.Tag<FileRepository, FileRepository> = Context.GenericTag<FileRepository>(
  "@filedata/core/FileRepository"
)

/**
 * Every submission of a file in `range` (default: all of them) as a `Stream`, one chunk per page.
 *
 * @since 0.1.0
 * @category accessors
 */
export const submissions = (
  repository: FileRepository,
  fileId: FileId,
  range: Omit<SubmissionRange, "after"> = {}
): Stream.Stream<StoredSubmission, StorageUnavailable> =>
  Stream.paginateChunkEffect(undefined as string | undefined, (after) =>
    Effect.map(
      repository.readSubmissions(fileId, { ...range, after }),
      (page) =>
        [
          Chunk.unsafeFromArray(page.entries.map(SubmissionEntry.parse)),
          page.hasMore ? Option.some(page.next) : Option.none()
        ] as const
    )
  )
