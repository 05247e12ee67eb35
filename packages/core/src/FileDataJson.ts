/**
 * The reply body, written as JSON text piece by piece so a file of any size streams in bounded memory.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { FileData, StoredFile, StoredSubmission, Submission } from "./FileData.js"
import type { StorageUnavailable } from "./FileDataError.js"
import type { FileDataReply } from "./GetFileData.js"

/**
 * Everything before the first submission; field order follows the specification.
 *
 * @since 0.1.0
 * @category encoding
 */
export const head = (file: StoredFile): string =>
  `{"name":${JSON.stringify(file.name)},"creationDate":"${file.creationDate}",` +
  `"publicAvailability":${file.publicAvailability},"SubmissionCounter":${file.SubmissionCounter},` +
  `"VisitCounter":${file.VisitCounter},"submissions":[`

/**
 * Closes the submissions array and the object.
 *
 * @since 0.1.0
 * @category encoding
 */
export const tail = "]}"

/**
 * One submission. Timestamps are already in reply form and content is stored JSON, so nothing is escaped.
 *
 * @since 0.1.0
 * @category encoding
 */
export const submission = (row: StoredSubmission): string =>
  `{"createdDate":"${row.createdDate}","content":${row.contentJson}}`

const rows = (chunk: Chunk.Chunk<StoredSubmission>): string => {
  let out = ""
  for (const row of chunk) {
    out += out === "" ? submission(row) : "," + submission(row)
  }
  return out
}

/**
 * The whole reply as a stream of text pieces, one per page the repository reads.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (reply: FileDataReply): Stream.Stream<string, StorageUnavailable> =>
  Stream.make(head(reply.file)).pipe(
    Stream.concat(
      reply.submissions.pipe(
        Stream.chunks,
        Stream.filter(Chunk.isNonEmpty),
        Stream.mapAccum(true, (first, chunk) => [false, first ? rows(chunk) : "," + rows(chunk)] as const)
      )
    ),
    Stream.concat(Stream.make(tail))
  )

/**
 * The whole reply as a value, for embedders that want objects rather than text. Holds it all in memory.
 *
 * @since 0.1.0
 * @category encoding
 */
export const collect = (reply: FileDataReply): Effect.Effect<FileData, StorageUnavailable> =>
  Stream.runCollect(reply.submissions).pipe(
    Effect.map(
      (submissions): FileData => ({
        name: reply.file.name,
        creationDate: reply.file.creationDate,
        publicAvailability: reply.file.publicAvailability,
        SubmissionCounter: reply.file.SubmissionCounter,
        VisitCounter: reply.file.VisitCounter,
        submissions: Chunk.toReadonlyArray(
          Chunk.map(
            submissions,
            (row): Submission => ({
              createdDate: row.createdDate,
              content: JSON.parse(row.contentJson)
            })
          )
        )
      })
    )
  )
