/**
 * A successful answer of `GetFileData`: the file, and a reader of its submissions page by page in reply order,
 * so a file of any size is answered in bounded memory. `FileDataEncoder` writes it as JSON text.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { FileData, StoredFile, Submission } from "../shared/FileData.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import { type JoinedPage, joinedText } from "../shared/FileRepository.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface FileDataReply {
  readonly file: StoredFile
  /**
   * The page that starts after `after` (`undefined`: the first page), its entries joined as the reply writes them,
   * as the file was when it was read: pages read while a writer appends show neither its submissions nor half of
   * them.
   */
  readonly submissionPage: (after: string | undefined) => Effect.Effect<JoinedPage, StorageUnavailable>
}

/**
 * The whole reply as a value, for embedders that want objects rather than text. Holds it all in memory.
 *
 * @since 0.1.0
 * @category destructors
 */
export const toFileData: (reply: FileDataReply) => Effect.Effect<FileData, StorageUnavailable> = Effect.fnUntraced(
  function* (reply: FileDataReply) {
    const submissions: Array<Submission> = []
    let after: string | undefined
    let hasMore = true
    while (hasMore) {
      const page: JoinedPage = yield* reply.submissionPage(after)
      // An entry is the submission as the reply writes it, so a page parses to the reply's objects.
      if (page.count > 0) {
        for (const submission of JSON.parse(`[${joinedText(page)}]`)) submissions.push(submission)
      }
      after = page.next
      hasMore = page.hasMore
    }
    const data: FileData = {
      name: reply.file.name,
      creationDate: reply.file.creationDate,
      publicAvailability: reply.file.publicAvailability,
      SubmissionCounter: reply.file.SubmissionCounter,
      VisitCounter: reply.file.VisitCounter,
      submissions
    }
    return data
  }
)
