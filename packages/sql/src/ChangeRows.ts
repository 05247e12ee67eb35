/**
 * The change feed as both SQL adapters read it (`FileRepository.readChanges`): a position is a change's `seq` as
 * decimal text, inserts and erasures taking theirs from the submissions' one counter in commit order
 * (docs/architecture.md#the-change-feed), and a page is the rows of a file's `submissions` and
 * `submission_erasures` merged in `seq` order, one more than asked for, to tell whether more follow.
 *
 * @since 0.3.0
 */
import { type FileRepository, SubmissionEntry, SubmissionId } from "@filedata/core"
import * as SubmissionPosition from "./SubmissionPosition.js"

/**
 * Where a file's feed starts: before every change, as every `seq` is at least 1.
 *
 * @since 0.3.0
 * @category constants
 */
export const start = "0"

/**
 * The `seq` a position names, if it is one an adapter could have made (a canonical numeral within int8); any
 * other text names none, and is read as no change.
 *
 * @since 0.3.0
 * @category decoding
 */
export const parse: (text: string) => string | undefined = SubmissionPosition.parseSeq

/**
 * A change as read: its `seq` (int8 may come as text), the submission's id, and its entry for a stored
 * submission, null for an erased one.
 *
 * @since 0.3.0
 * @category models
 */
export type Row = readonly [seq: number | string, id: string, entry: string | null]

/**
 * The page of at most `limit` changes that `rows` (read with `LIMIT limit + 1`, in `seq` order) hold; `next` the
 * last change's position, or `after` when there is none.
 *
 * @since 0.3.0
 * @category constructors
 */
export const page = (rows: ReadonlyArray<Row>, limit: number, after: string): FileRepository.ChangePage => {
  const count = Math.min(rows.length, limit)
  const changes: Array<FileRepository.Change> = new Array(count)
  for (let i = 0; i < count; i++) {
    const [, id, entry] = rows[i] as Row
    // Both were written by the store from `SubmissionId` and `SubmissionEntry`.
    changes[i] =
      entry === null
        ? { type: "submission.erased", id: SubmissionId.unsafeStored(id) }
        : {
            type: "submission.created",
            id: SubmissionId.unsafeStored(id),
            entry: SubmissionEntry.unsafeStored(entry)
          }
  }
  const last = rows[count - 1]
  return { changes, next: last === undefined ? after : String(last[0]), hasMore: rows.length > limit }
}
