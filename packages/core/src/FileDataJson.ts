/**
 * The reply body, written as JSON text piece by piece so a file of any size streams in bounded memory.
 *
 * @since 0.1.0
 */
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

/**
 * The submissions of one page, comma-separated, as they stand inside the array.
 *
 * @since 0.1.0
 * @category encoding
 */
export const rows = (page: ReadonlyArray<StoredSubmission>): string => {
  let out = ""
  for (const row of page) {
    out += out === "" ? submission(row) : "," + submission(row)
  }
  return out
}

/**
 * Writes the whole reply through `write`, one piece per page; the transport decides how to wait for a
 * slow reader. A reply that fits one page is written in one piece, marked `last`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const writeTo = <E, R>(
  reply: FileDataReply,
  write: (piece: string, last: boolean) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | StorageUnavailable, R> =>
  Effect.gen(function* () {
    let piece = head(reply.file)
    let empty = true
    let after: string | undefined
    for (;;) {
      const page = yield* reply.submissionPage(after)
      if (page.rows.length > 0) {
        piece += (empty ? "" : ",") + rows(page.rows)
        empty = false
      }
      if (page.next === undefined) return yield* write(piece + tail, true)
      yield* write(piece, false)
      piece = ""
      after = page.next
    }
  })

/**
 * The whole reply as a stream of text pieces, one per page.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (reply: FileDataReply): Stream.Stream<string, StorageUnavailable> =>
  Stream.asyncPush<string, StorageUnavailable>((emit) =>
    writeTo(reply, (piece, last) =>
      Effect.sync(() => {
        emit.single(piece)
        if (last) emit.end()
      })
    ).pipe(
      Effect.catchAll((error) => Effect.sync(() => emit.fail(error))),
      Effect.forkScoped
    )
  )

/**
 * The whole reply as a value, for embedders that want objects rather than text. Holds it all in memory.
 *
 * @since 0.1.0
 * @category encoding
 */
export const collect = (reply: FileDataReply): Effect.Effect<FileData, StorageUnavailable> =>
  Effect.gen(function* () {
    const submissions: Array<Submission> = []
    let after: string | undefined
    do {
      const page = yield* reply.submissionPage(after)
      for (const row of page.rows)
        submissions.push({ createdDate: row.createdDate, content: JSON.parse(row.contentJson) })
      after = page.next
    } while (after !== undefined)
    return {
      name: reply.file.name,
      creationDate: reply.file.creationDate,
      publicAvailability: reply.file.publicAvailability,
      SubmissionCounter: reply.file.SubmissionCounter,
      VisitCounter: reply.file.VisitCounter,
      submissions
    }
  })
