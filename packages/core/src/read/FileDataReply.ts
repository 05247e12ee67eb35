/**
 * A successful answer of `GetFileData`: the file, and a reader of its submissions page by page in reply order,
 * so a file of any size is answered in bounded memory. `FileDataEncoder` writes it as JSON text.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as EncodedPages from "../shared/EncodedPages.js"
import type { FileData, Submission } from "../shared/FileData.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import type { FileRepository, FoundFile, SubmissionPage } from "../shared/FileRepository.js"

/**
 * The file as found, with its read point, and the repository its pages are read from: every page is read up to
 * that read point, so pages read while a writer appends show neither its submissions nor half of them. Two
 * fields, no reader made per request (bench/immediate-run-with.mjs).
 *
 * @since 0.1.0
 * @category models
 */
export interface FileDataReply {
  readonly file: FoundFile
  readonly files: FileRepository
}

/**
 * The page that starts after `after` (`undefined`: the first page), in domain terms.
 *
 * @since 0.2.0
 * @category accessors
 */
export const submissions = (
  reply: FileDataReply,
  after: string | undefined
): Effect.Effect<SubmissionPage, StorageUnavailable> =>
  reply.files.readSubmissions(reply.file.id, { after, upTo: reply.file.readPoint, endPosition: false })

/**
 * The same page, its entries joined as the reply writes them (by the adapter when it can, `EncodedPages`); the
 * reply ends with the file's last submission, so it asks no end position.
 *
 * @since 0.2.0
 * @category accessors
 */
export const submissionPage = (
  reply: FileDataReply,
  after: string | undefined
): Effect.Effect<EncodedPages.JoinedPage, StorageUnavailable> =>
  EncodedPages.of(reply.files).readJoined(
    reply.file.id,
    { after, upTo: reply.file.readPoint, endPosition: false },
    "stored"
  )

/**
 * The whole reply as a value, for embedders that want objects rather than text. Holds it all in memory.
 *
 * @since 0.1.0
 * @category destructors
 */
export const toFileData: (reply: FileDataReply) => Effect.Effect<FileData, StorageUnavailable> = Effect.fnUntraced(
  function* (reply: FileDataReply) {
    const read: Array<Submission> = []
    let after: string | undefined
    let hasMore = true
    while (hasMore) {
      const page: SubmissionPage = yield* submissions(reply, after)
      // An entry is the submission as the reply writes it, so it parses to the reply's object.
      for (const entry of page.entries) read.push(JSON.parse(entry))
      after = page.next
      hasMore = page.hasMore
    }
    const data: FileData = {
      name: reply.file.name,
      creationDate: reply.file.creationDate,
      publicAvailability: reply.file.publicAvailability,
      SubmissionCounter: reply.file.SubmissionCounter,
      VisitCounter: reply.file.VisitCounter,
      submissions: read
    }
    return data
  }
)
