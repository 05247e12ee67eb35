/**
 * A successful answer of `GetChanges`: the requested run of a file's change feed, read page by page as it is
 * written (so up to 10,000 changes never sit in memory at once), each page up to the read point taken with the
 * file, joined as the reply writes it where the adapter joins it (`EncodedPages.readJoinedChanges`), else as the
 * domain's `ChangePage`, and how the reply ends: `next`, the feed cursor after its last change, and `hasMore`,
 * whether more changes were committed by then. `ChangesEncoder` writes it as JSON text.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as EncodedPages from "../shared/EncodedPages.js"
import { FileId, type StoredFile, type Submission, SubmissionContent, Timestamp } from "../shared/FileData.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import type { Change, ChangePage } from "../shared/FileRepository.js"
import * as DemoExamples from "../shared/internal/demoExamples.js"
import { SubmissionId } from "../shared/SubmissionId.js"
import * as ChangeCursor from "./ChangeCursor.js"

/**
 * @since 0.3.0
 * @category models
 */
export interface ChangesReply {
  /** The file the changes are of. */
  readonly file: StoredFile
  /** How many changes the reply holds at most. */
  readonly limit: number
  /**
   * At most `limit` changes after the feed position `after` (`undefined`: where the request starts), as the
   * file was when it was read.
   */
  readonly changePage: (after: string | undefined, limit: number) => Effect.Effect<Page, StorageUnavailable>
}

/**
 * A page of a reply as storage handed it over: joined by the adapter, or the domain's page, which the reply writes
 * change by change.
 *
 * @since 0.3.0
 * @category models
 */
export type Page = EncodedPages.JoinedChanges | ChangePage

/**
 * How many changes a page holds.
 *
 * @since 0.3.0
 * @category destructors
 */
export const countOf = (page: Page): number => ("joined" in page ? page.count : page.changes.length)

/**
 * The most changes one page of a reply asks storage for.
 *
 * @since 0.3.0
 * @category constants
 */
export const pageLimit = 1000

/**
 * A submission stored by an import or an append: its id, `createdDate` and content.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SubmissionCreated = Schema.Struct({
  type: Schema.Literal("submission.created"),
  id: SubmissionId,
  createdDate: Timestamp,
  content: SubmissionContent
}).annotations({ identifier: "SubmissionCreated", description: "A submission stored by an import or an append" })

/**
 * A submission erased by an operator: its id alone. Its `submission.created` change is no longer in the feed.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SubmissionErased = Schema.Struct({
  type: Schema.Literal("submission.erased"),
  id: SubmissionId
}).annotations({
  identifier: "SubmissionErased",
  description: "A submission erased by an operator; its submission.created change is no longer in the feed"
})

/**
 * One change of the feed, told apart by `type`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ChangeJson = Schema.Union(SubmissionCreated, SubmissionErased).annotations({ identifier: "Change" })

/**
 * @since 0.3.0
 * @category models
 */
export type ChangeJson = typeof ChangeJson.Type

// The demo file's last two submissions, and the first of them erased.
const alan = DemoExamples.contactFormSubmissions[2] as Submission
const katherine = DemoExamples.contactFormSubmissions[3] as Submission

/**
 * The reply as the contract writes it: the changes in commit order, `next` and `hasMore`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ChangesPage = Schema.Struct({
  changes: Schema.Array(ChangeJson),
  next: Schema.String.annotations({
    title: "ChangeCursor",
    description:
      "Opaque feed cursor after the last change of this reply (or the after sent, when there is none): send it as after to continue"
  }),
  hasMore: Schema.Boolean.annotations({
    description: "Whether more changes were committed when the reply was read"
  })
}).annotations({
  identifier: "ChangesPage",
  examples: [
    {
      // Ids are drawn when a submission is stored: each file's differ from these.
      changes: [
        { type: "submission.created", id: "sub_Vb2kQe8WfR1xNc4TgH7p" as SubmissionId, ...alan },
        { type: "submission.created", id: "sub_3q2-7wEXAMPLEu5Ry0QZ" as SubmissionId, ...katherine },
        { type: "submission.erased", id: "sub_Vb2kQe8WfR1xNc4TgH7p" as SubmissionId }
      ],
      next: ChangeCursor.encode(FileId.make("demo-contact-form"), "7"),
      hasMore: false
    }
  ]
})

/**
 * @since 0.3.0
 * @category models
 */
export type ChangesPage = typeof ChangesPage.Type

/**
 * Where the reading of a reply stands between pages: the feed position to read after, and how many changes the
 * reply may still hold.
 *
 * @since 0.3.0
 * @category models
 */
export interface Progress {
  readonly after: string | undefined
  readonly remaining: number
}

/**
 * Where the reading of a reply starts.
 *
 * @since 0.3.0
 * @category constructors
 */
export const start = (reply: ChangesReply): Progress => ({ after: undefined, remaining: reply.limit })

/**
 * One page of a reply: its changes ({@link Page}), and either where the next page starts or, after the last page,
 * how the reply ends.
 *
 * @since 0.3.0
 * @category models
 */
export type Step =
  | { readonly page: Page; readonly progress: Progress; readonly end: undefined }
  | {
      readonly page: Page
      readonly progress: undefined
      readonly end: { readonly next: ChangeCursor.ChangeCursor; readonly hasMore: boolean }
    }

/**
 * Reads the page of a reply that `progress` points at.
 *
 * @since 0.3.0
 * @category destructors
 */
export const step = (reply: ChangesReply, progress: Progress): Effect.Effect<Step, StorageUnavailable> =>
  Effect.map(reply.changePage(progress.after, Math.min(progress.remaining, pageLimit)), (page): Step => {
    const count = countOf(page)
    const remaining = progress.remaining - count
    // An empty page ends the reply too, whatever it says: the reply never asks for the same page twice.
    if (page.hasMore && remaining > 0 && count > 0) {
      return { page, progress: { after: page.next, remaining }, end: undefined }
    }
    return {
      page,
      progress: undefined,
      end: { next: ChangeCursor.encode(reply.file.id, page.next), hasMore: page.hasMore }
    }
  })

/**
 * A change as the reply shows it, as a value.
 *
 * @since 0.3.0
 * @category destructors
 */
export const toJson = (change: Change): ChangeJson =>
  change.type === "submission.erased"
    ? { type: change.type, id: change.id }
    : // An entry is the submission as the reply writes it, so it parses to the reply's fields.
      { type: change.type, id: change.id, ...(JSON.parse(change.entry) as Submission) }

/**
 * The whole reply as a value, for embedders and clients that want objects rather than text.
 *
 * @since 0.3.0
 * @category destructors
 */
export const toChangesPage: (reply: ChangesReply) => Effect.Effect<ChangesPage, StorageUnavailable> = Effect.fnUntraced(
  function* (reply: ChangesReply) {
    const changes: Array<ChangeJson> = []
    let progress: Progress = start(reply)
    for (;;) {
      const read: Step = yield* step(reply, progress)
      // A joined page is the reply's text of its changes, so it parses to the reply's objects.
      const { page } = read
      if ("joined" in page) {
        if (page.count > 0) changes.push(...(JSON.parse(`[${EncodedPages.joinedText(page)}]`) as Array<ChangeJson>))
      } else {
        for (const change of page.changes) changes.push(toJson(change))
      }
      if (read.end !== undefined) return { changes, next: read.end.next, hasMore: read.end.hasMore }
      progress = read.progress
    }
  }
)
