/**
 * The JSON the service reads and writes, as a client sends and receives it. Requests are plain strings and
 * numbers, no brands: the server decodes them with the core's own, stricter rules. Replies are the core's
 * domain schemas (`FileData` of `@filedata/core`, effect only), the one definition of their shape.
 *
 * @since 0.1.0
 */
import { FileData as Domain, RateLimiter, SubmissionsReply } from "@filedata/core"
import * as Schema from "effect/Schema"

/**
 * An instant as replies show it: ISO 8601 in UTC with milliseconds, `YYYY-MM-DDTHH:mm:ss.sssZ`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Timestamp = Domain.Timestamp

/**
 * A whole number, 0 or more.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Count = Domain.Count

/**
 * A string with at least one character, as every request field is.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NonEmptyString = Schema.String.pipe(Schema.minLength(1)).annotations({ title: "Non-empty string" })

/**
 * The body of `POST /api/v1/file-data`: exactly these two fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetFileDataRequest = Schema.Struct({
  fileId: NonEmptyString.pipe(Schema.maxLength(256)).annotations({
    title: "Non-empty string",
    description:
      "Identifier of the file whose data is requested: at most 256 characters (code points), well-formed Unicode without U+0000",
    examples: ["file-1"]
  }),
  apiKey: NonEmptyString.annotations({
    description: "The caller's API key; it travels only in this body. Well-formed Unicode without U+0000",
    examples: ["a-plaintext-api-key"]
  })
}).annotations({ identifier: "GetFileDataRequest", parseOptions: { onExcessProperty: "error" } })

/**
 * @since 0.1.0
 * @category models
 */
export type GetFileDataRequest = typeof GetFileDataRequest.Type

/**
 * An instant as a request gives it: any ISO 8601 date-time with a zone (`Z` or an offset), e.g.
 * `2024-01-01T00:00:00.000Z` or `2024-01-01T01:00:00+01:00`. Sent as written; the server reads and checks it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Instant = NonEmptyString.annotations({
  title: "Instant",
  description: "ISO 8601 date-time with a zone (Z or an offset), e.g. 2024-01-01T00:00:00.000Z",
  jsonSchema: { format: "date-time" }
})

/**
 * The largest `limit` of an incremental read; without one a reply holds at most 1,000 submissions.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxSubmissionsLimit = 10_000

/**
 * The body of `POST /api/v1/file-data/submissions`: `fileId` and `apiKey` as for `getFileData`, and the
 * optional bounds of the read. Any other field is refused.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetSubmissionsRequest = Schema.Struct({
  fileId: GetFileDataRequest.fields.fileId,
  apiKey: GetFileDataRequest.fields.apiKey,
  since: Schema.optionalWith(
    Instant.annotations({
      description: "Only submissions with createdDate >= since: an ISO 8601 date-time with a zone",
      examples: ["2024-01-02T00:00:00.000Z"]
    }),
    { exact: true }
  ),
  until: Schema.optionalWith(
    Instant.annotations({
      description: "Only submissions with createdDate < until: an ISO 8601 date-time with a zone, not before since",
      examples: ["2024-02-01T00:00:00.000Z"]
    }),
    { exact: true }
  ),
  after: Schema.optionalWith(
    NonEmptyString.annotations({
      title: "Cursor",
      description:
        "The next of an earlier reply for the same file: continue after its last submission. Opaque; any other text is refused"
    }),
    { exact: true }
  ),
  limit: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1, maxSubmissionsLimit)).annotations({
      title: "Limit",
      description: `At most this many submissions, 1 to ${maxSubmissionsLimit}; default 1000`
    }),
    { exact: true }
  )
}).annotations({ identifier: "GetSubmissionsRequest", parseOptions: { onExcessProperty: "error" } })

/**
 * @since 0.1.0
 * @category models
 */
export type GetSubmissionsRequest = typeof GetSubmissionsRequest.Type

/**
 * What a submission holds: form-field name to the submitted value.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SubmissionContent = Domain.SubmissionContent

/**
 * One form submission.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Submission = Domain.Submission

/**
 * @since 0.1.0
 * @category models
 */
export type Submission = typeof Submission.Type

/**
 * The reply of `POST /api/v1/file-data`: the file's metadata, its counters and every submission, in
 * ascending `createdDate` with ties in insertion order. The capitals of the counters are part of the names.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FileData = Domain.FileData

/**
 * @since 0.1.0
 * @category models
 */
export type FileData = typeof FileData.Type

/**
 * The reply of `POST /api/v1/file-data/submissions`: the submissions of the requested range in reply order
 * (ascending `createdDate`, ties in insertion order), the cursor after the last of them, and whether more
 * matched when the reply was read.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SubmissionsPage = SubmissionsReply.SubmissionsPage

/**
 * @since 0.1.0
 * @category models
 */
export type SubmissionsPage = typeof SubmissionsPage.Type

/**
 * How the rate limiter counts at the moment: in this instance's memory, in Redis, in memory while Redis is
 * unreachable, or, while it is unreachable and so configured, refusing or admitting uncounted.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RateLimiterCounting = RateLimiter.Counting

/**
 * @since 0.1.0
 * @category models
 */
export type RateLimiterCounting = typeof RateLimiterCounting.Type

/**
 * The `/health` reply while storage answers, with how the rate limiter counts at the moment.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  rateLimiter: Schema.optionalWith(RateLimiterCounting, { exact: true })
}).annotations({ identifier: "Health" })

/**
 * @since 0.1.0
 * @category models
 */
export type Health = typeof Health.Type
