/**
 * A submission as the reply writes it, `{"createdDate":"…","content":{…}}`: the text storage keeps for each
 * submission, rendered once when the submission is written, so that reading a page formats nothing and a reply
 * only joins entries (docs/performance.md#stored-reply-entries).
 *
 * @since 0.1.0
 */
import type * as Brand from "effect/Brand"
import { type StoredSubmission, type Timestamp, timestampFromEpochMillis } from "./FileData.js"
import type { SubmissionId } from "./SubmissionId.js"

/**
 * The JSON text of one submission of a reply. Only this module makes one, so every entry an adapter hands out
 * has exactly the reply's form.
 *
 * @since 0.1.0
 * @category models
 */
export type SubmissionEntry = string & Brand.Brand<"SubmissionEntry">

/**
 * The entry of a stored submission. The timestamp is already in reply form and the content is stored JSON
 * text, so nothing is escaped or re-encoded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStored = (submission: StoredSubmission): SubmissionEntry =>
  `{"createdDate":"${submission.createdDate}","content":${submission.contentJson}}` as SubmissionEntry

/**
 * The entry of a submission as it is written to storage: its instant in epoch milliseconds and its content as
 * JSON text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const render = (createdDateMillis: number, contentJson: string): SubmissionEntry =>
  fromStored({ createdDate: timestampFromEpochMillis(createdDateMillis), contentJson })

/**
 * Text that storage kept as an entry; it was made by {@link render} when it was written.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeStored = (text: string): SubmissionEntry => text as SubmissionEntry

const CONTENT_KEY = '","content":'
const DATE_START = '{"createdDate":"'.length

/**
 * The parts of an entry, for callers that want them apart; the content stays text.
 *
 * @since 0.1.0
 * @category destructors
 */
export const parse = (entry: SubmissionEntry): StoredSubmission => {
  // A timestamp holds no quote, so the first `","content":` ends it.
  const at = entry.indexOf(CONTENT_KEY, DATE_START)
  return {
    createdDate: entry.slice(DATE_START, at) as Timestamp,
    contentJson: entry.slice(at + CONTENT_KEY.length, -1)
  }
}

/**
 * The entry with the submission's id first, `{"id":"sub_…","createdDate":"…","content":{…}}`: how the
 * incremental read, the NDJSON export and the change feed show a submission. An id is URL-safe, so it needs no
 * escaping.
 *
 * @since 0.3.0
 * @category constructors
 */
export const withId = (id: SubmissionId, entry: SubmissionEntry): string => withMembers(`"id":"${id}"`, entry)

/**
 * The entry with `members` (JSON object members, already encoded) spliced in front of its own, with no part of it
 * parsed or encoded again: the one rule for putting an id, or a change's type and id, before a stored entry.
 *
 * @since 0.3.0
 * @category constructors
 */
export const withMembers = (members: string, entry: SubmissionEntry): string => `{${members},${entry.slice(1)}`
