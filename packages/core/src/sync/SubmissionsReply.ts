/**
 * A successful answer of `GetSubmissions`: the requested run of a file's submissions, read page by page as it
 * is written (so up to 10,000 submissions never sit in memory at once), each page up to the read point taken
 * with the file and joined with each submission's id first (`EncodedPages.readJoined`, form `"withId"`: by the
 * adapter when it can), and how the reply ends: `next`, the cursor after its last submission, and `hasMore`,
 * whether more matched. `SubmissionsEncoder` writes it as JSON text.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as EncodedPages from "../shared/EncodedPages.js"
import { type StoredFile, SubmissionContent, Timestamp } from "../shared/FileData.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import * as DemoExamples from "../shared/internal/demoExamples.js"
import { SubmissionId } from "../shared/SubmissionId.js"
import * as SubmissionCursor from "./SubmissionCursor.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface SubmissionsReply {
  /** The file the submissions are of. */
  readonly file: StoredFile
  /** How many submissions the reply holds at most. */
  readonly limit: number
  /**
   * At most `limit` submissions of the requested range after `after` (`undefined`: where the request starts),
   * as the file was when it was read, joined by commas, each with its id first.
   */
  readonly submissionPage: (
    after: string | undefined,
    limit: number
  ) => Effect.Effect<EncodedPages.JoinedPage, StorageUnavailable>
}

/**
 * The most entries one page of a reply asks storage for.
 *
 * @since 0.1.0
 * @category constants
 */
export const pageLimit = 1000

/**
 * A submission as the incremental read, the NDJSON export and the change feed show it: the File reply's
 * submission with its id first (`SubmissionEntry.withId`).
 *
 * @since 0.3.0
 * @category schemas
 */
export const IdentifiedSubmission = Schema.Struct({
  id: SubmissionId,
  createdDate: Timestamp,
  content: SubmissionContent
}).annotations({ identifier: "IdentifiedSubmission" })

/**
 * @since 0.3.0
 * @category models
 */
export type IdentifiedSubmission = typeof IdentifiedSubmission.Type

const exampleIds = ["sub_Vb2kQe8WfR1xNc4TgH7p", "sub_3q2-7wEXAMPLEu5Ry0QZ"]

/**
 * The reply as the contract writes it: the submissions in reply order, each with its id, `next` and `hasMore`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SubmissionsPage = Schema.Struct({
  submissions: Schema.Array(IdentifiedSubmission),
  next: Schema.String.annotations({
    title: "Cursor",
    description:
      "Opaque cursor after the last submission of this reply (or the after sent, when there is none): send it as after to continue"
  }),
  hasMore: Schema.Boolean.annotations({
    description: "Whether more submissions of the range matched when the reply was read"
  })
}).annotations({
  identifier: "SubmissionsPage",
  examples: [
    {
      // The reply to GetSubmissionsRequest's example (its fields' examples) after `pnpm filedata demo`.
      // Ids are drawn when the demo imports its file, so each run's differ from these.
      submissions: DemoExamples.contactFormSubmissions
        .slice(2)
        .map((submission, i) => ({ id: exampleIds[i] as SubmissionId, ...submission })),
      next: "MTljNTNhYzBiMDc2YWRjMzYxNzEwNzQ4NTMwMDA0OjQ",
      hasMore: false
    }
  ]
})

/**
 * @since 0.1.0
 * @category models
 */
export type SubmissionsPage = typeof SubmissionsPage.Type

/**
 * Where the reading of a reply stands between pages: the position to read after, and how many submissions the
 * reply may still hold.
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  readonly after: string | undefined
  readonly remaining: number
}

/**
 * Where the reading of a reply starts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (reply: SubmissionsReply): Progress => ({ after: undefined, remaining: reply.limit })

/**
 * One page of a reply: its submissions as the reply writes them, joined (`EncodedPages.JoinedPage`), and either
 * where the next page starts or, after the last page, how the reply ends.
 *
 * @since 0.1.0
 * @category models
 */
export type Step =
  | { readonly page: EncodedPages.JoinedPage; readonly progress: Progress; readonly end: undefined }
  | {
      readonly page: EncodedPages.JoinedPage
      readonly progress: undefined
      readonly end: { readonly next: SubmissionCursor.SubmissionCursor; readonly hasMore: boolean }
    }

/**
 * Reads the page of a reply that `progress` points at.
 *
 * @since 0.1.0
 * @category destructors
 */
export const step = (reply: SubmissionsReply, progress: Progress): Effect.Effect<Step, StorageUnavailable> =>
  Effect.flatMap(reply.submissionPage(progress.after, Math.min(progress.remaining, pageLimit)), (page) => {
    const remaining = progress.remaining - page.count
    // An empty page ends the reply too, whatever it says: the reply never asks for the same page twice.
    if (page.hasMore && remaining > 0 && page.count > 0) {
      return Effect.succeed<Step>({ page, progress: { after: page.next, remaining }, end: undefined })
    }
    // The range asked for its end position (the default), which the storage conformance suite holds adapters to.
    if (page.next === undefined) return Effect.dieMessage("the page that ends a reply named no position")
    return Effect.succeed<Step>({
      page,
      progress: undefined,
      end: { next: SubmissionCursor.encode(reply.file.id, page.next), hasMore: page.hasMore }
    })
  })

/**
 * The whole reply as a value, for embedders and clients that want objects rather than text.
 *
 * @since 0.1.0
 * @category destructors
 */
export const toSubmissionsPage: (reply: SubmissionsReply) => Effect.Effect<SubmissionsPage, StorageUnavailable> =
  Effect.fnUntraced(function* (reply: SubmissionsReply) {
    const submissions: Array<IdentifiedSubmission> = []
    let progress: Progress = start(reply)
    for (;;) {
      const read: Step = yield* step(reply, progress)
      // A joined page is the reply's text of its submissions, so it parses to the reply's objects.
      if (read.page.count > 0) {
        submissions.push(...(JSON.parse(`[${EncodedPages.joinedText(read.page)}]`) as Array<IdentifiedSubmission>))
      }
      if (read.end !== undefined) return { submissions, next: read.end.next, hasMore: read.end.hasMore }
      progress = read.progress
    }
  })
