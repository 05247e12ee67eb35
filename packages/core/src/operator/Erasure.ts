/**
 * Erasing submissions: what an operator names (ids, or content values that must all match), what an erasure
 * did, and how it is refused. The operation itself is `OperatorStore.eraseSubmissions`, one transaction: after
 * it commits no read, export, feed page or webhook attempt carries the erased content, the file's
 * `SubmissionCounter` is lower by the number erased, the feed tells a `submission.erased` change for each, and
 * each webhook of the file gets a `submissions.erased` event.
 *
 * @since 0.3.0
 */
import type * as Arr from "effect/Array"
import * as Schema from "effect/Schema"
import type { FileId } from "../shared/FileData.js"
import * as Failure from "../shared/internal/failure.js"
import type { SubmissionId } from "../shared/SubmissionId.js"

/**
 * A content value a submission must have, exactly, under a name.
 *
 * @since 0.3.0
 * @category models
 */
export interface ContentMatch {
  readonly name: string
  readonly value: string
}

/**
 * Which submissions of the file to erase: these ids (each must name a submission of the file), or every
 * submission whose content matches all of `matches`.
 *
 * @since 0.3.0
 * @category models
 */
export type Selection =
  | { readonly _tag: "Ids"; readonly ids: Arr.NonEmptyReadonlyArray<SubmissionId> }
  | { readonly _tag: "Where"; readonly matches: Arr.NonEmptyReadonlyArray<ContentMatch> }

/**
 * What an erasure did: the ids of the submissions it erased, in the file's reply order, and the file's counters
 * after it.
 *
 * @since 0.3.0
 * @category models
 */
export interface Summary {
  readonly fileId: FileId
  readonly ids: ReadonlyArray<SubmissionId>
  readonly submissionCounter: number
  readonly visitCounter: number
}

/**
 * No file has this id: nothing was erased.
 *
 * @since 0.3.0
 * @category errors
 */
export class UnknownFile extends Failure.withMessage<UnknownFile>()(
  "UnknownFile",
  { fileId: Schema.String },
  (failure) => `No file has the id ${JSON.stringify(failure.fileId)}: nothing was erased`
) {}

/**
 * Ids that name no submission of the file: of another file (`elsewhere`), or of none (`unknown`). Nothing was
 * erased, not even the ids that were right.
 *
 * @since 0.3.0
 * @category errors
 */
export class SubmissionsNotInFile extends Failure.withMessage<SubmissionsNotInFile>()(
  "SubmissionsNotInFile",
  {
    fileId: Schema.String,
    unknown: Schema.Array(Schema.String),
    elsewhere: Schema.Array(Schema.String)
  },
  (failure) => {
    const file = JSON.stringify(failure.fileId)
    const parts: Array<string> = []
    if (failure.unknown.length > 0) {
      const ids = failure.unknown.join(", ")
      parts.push(`No submission has the id${failure.unknown.length === 1 ? "" : "s"} ${ids}`)
    }
    if (failure.elsewhere.length > 0) {
      const ids = failure.elsewhere.join(", ")
      parts.push(
        `${ids} ${failure.elsewhere.length === 1 ? "is a submission" : "are submissions"} of another file, not of file ${file}`
      )
    }
    return `${parts.join("; ")}: nothing was erased`
  }
) {}
