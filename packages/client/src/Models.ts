/**
 * The JSON the service reads and writes, as a client sends and receives it, all of it the core's own schemas
 * (`@filedata/core`, effect only): requests as plain strings and numbers, no brands, refused exactly when the
 * server refuses them; replies as the core's domain schemas, the one definition of their shape.
 *
 * @since 0.1.0
 */
import {
  ChangesReply,
  CreateWebhook,
  FileData as Domain,
  ExportSubmissions,
  GetChanges,
  GetFileData,
  GetSubmissions,
  ListWebhooks,
  ManageWebhook,
  RateLimiter,
  SubmissionsReply
} from "@filedata/core"
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
 * The body of `POST /api/v1/file-data`: exactly `fileId` and `apiKey`, refused exactly as the server refuses it
 * (the core's `GetFileData.RequestJson`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetFileDataRequest = GetFileData.RequestJson

/**
 * @since 0.1.0
 * @category models
 */
export type GetFileDataRequest = typeof GetFileDataRequest.Type

/**
 * The largest `limit` of an incremental read (the core's `GetSubmissions.maxLimit`).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxSubmissionsLimit = GetSubmissions.maxLimit

/**
 * The longest `wait` of an incremental read, in seconds.
 *
 * @since 0.2.0
 * @category constants
 */
export const maxSubmissionsWait = GetSubmissions.maxWait

/**
 * The body of `POST /api/v1/file-data/submissions`: `fileId` and `apiKey` as for `getFileData`, and the
 * optional bounds of the read; refused exactly as the server refuses it (the core's
 * `GetSubmissions.RequestJson`), a cursor of another file and an `until` before `since` included.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetSubmissionsRequest = GetSubmissions.RequestJson

/**
 * @since 0.1.0
 * @category models
 */
export type GetSubmissionsRequest = typeof GetSubmissionsRequest.Type

/**
 * The largest `limit` of a change feed read (the core's `GetChanges.maxLimit`).
 *
 * @since 0.3.0
 * @category constants
 */
export const maxChangesLimit = GetChanges.maxLimit

/**
 * The longest `wait` of a change feed read, in seconds.
 *
 * @since 0.3.0
 * @category constants
 */
export const maxChangesWait = GetChanges.maxWait

/**
 * The body of `POST /api/v1/file-data/changes`: `fileId` and `apiKey` as for `getFileData`, and the optional
 * `after` (a feed cursor), `limit` and `wait`; refused exactly as the server refuses it (the core's
 * `GetChanges.RequestJson`), a cursor of the incremental read or of another file included.
 *
 * @since 0.3.0
 * @category schemas
 */
export const GetChangesRequest = GetChanges.RequestJson

/**
 * @since 0.3.0
 * @category models
 */
export type GetChangesRequest = typeof GetChangesRequest.Type

/**
 * The formats of an export: `csv` for spreadsheets, `ndjson` for pipelines.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ExportFormat = ExportSubmissions.Format

/**
 * @since 0.2.0
 * @category models
 */
export type ExportFormat = typeof ExportFormat.Type

/**
 * The body of `POST /api/v1/file-data/export`: `fileId` and `apiKey` as for `getFileData`, the `format`, and the
 * optional window of the incremental read; refused exactly as the server refuses it (the core's
 * `ExportSubmissions.RequestJson`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const ExportRequest = ExportSubmissions.RequestJson

/**
 * @since 0.2.0
 * @category models
 */
export type ExportRequest = typeof ExportRequest.Type

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
 * One form submission with its id, as the incremental read, NDJSON export lines and webhook events show it.
 *
 * @since 0.3.0
 * @category schemas
 */
export const IdentifiedSubmission = SubmissionsReply.IdentifiedSubmission

/**
 * @since 0.3.0
 * @category models
 */
export type IdentifiedSubmission = typeof IdentifiedSubmission.Type

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
 * (ascending `createdDate`, ties in insertion order), each with its id, the cursor after the last of them, and
 * whether more matched when the reply was read.
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
 * One change of the feed: `submission.created` (id, `createdDate`, content) or `submission.erased` (id).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Change = ChangesReply.ChangeJson

/**
 * @since 0.3.0
 * @category models
 */
export type Change = typeof Change.Type

/**
 * The reply of `POST /api/v1/file-data/changes`: the file's changes in commit order, the feed cursor after the
 * last of them, and whether more were committed when the reply was read.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ChangesPage = ChangesReply.ChangesPage

/**
 * @since 0.3.0
 * @category models
 */
export type ChangesPage = typeof ChangesPage.Type

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
  rateLimiter: Schema.optionalWith(RateLimiterCounting, { exact: true }),
  webhookDelivery: Schema.Boolean.annotations({
    description: "Whether this instance delivers webhook events (false with WEBHOOK_DELIVERY=false)"
  })
}).annotations({ identifier: "Health" })

/**
 * @since 0.1.0
 * @category models
 */
export type Health = typeof Health.Type

/**
 * The body of `createWebhook`: `apiKey`, `fileId`, `url`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const CreateWebhookRequest = CreateWebhook.RequestJson

/**
 * The body of `listWebhooks`: `apiKey`, optional `fileId`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ListWebhooksRequest = ListWebhooks.RequestJson

/**
 * The body of `deleteWebhook`, `enableWebhook` and `rotateWebhookSecret`: `apiKey`, `id`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const WebhookTargetRequest = ManageWebhook.RequestJson.target

/**
 * The body of `webhookDeliveries`: `apiKey`, `id`, optional `limit` (1 to 1000, default 100).
 *
 * @since 0.2.0
 * @category schemas
 */
export const DeliveriesRequest = ManageWebhook.RequestJson.deliveries

/**
 * The body of `redeliverWebhookEvent`: `apiKey`, `id`, `eventId`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const RedeliverRequest = ManageWebhook.RequestJson.redeliver

/**
 * A webhook as the replies show it: never its secret.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Webhook = Schema.Struct({
  id: Schema.String,
  fileId: Schema.String,
  url: Schema.String,
  enabled: Schema.Boolean,
  createdAt: Schema.String,
  disabledReason: Schema.optionalWith(Schema.Literal("gone", "failing", "operator"), { exact: true })
}).annotations({ identifier: "Webhook" })

/**
 * The reply of `createWebhook`: the webhook and its secret, shown this once.
 *
 * @since 0.2.0
 * @category schemas
 */
export const CreatedWebhook = Schema.Struct({ ...Webhook.fields, secret: Schema.String }).annotations({
  identifier: "CreatedWebhook"
})

/**
 * The reply of `listWebhooks`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const WebhookList = Schema.Struct({ webhooks: Schema.Array(Webhook) }).annotations({
  identifier: "WebhookList"
})

/**
 * The reply of `rotateWebhookSecret`: the new secret, shown this once.
 *
 * @since 0.2.0
 * @category schemas
 */
export const RotatedSecret = Schema.Struct({ id: Schema.String, secret: Schema.String }).annotations({
  identifier: "RotatedSecret"
})

/**
 * One attempt of the deliveries log.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Delivery = Schema.Struct({
  eventId: Schema.String,
  attempt: Schema.Number,
  at: Schema.String,
  status: Schema.NullOr(Schema.Number),
  outcome: Schema.Literal("delivered", "retrying", "failed"),
  error: Schema.optionalWith(Schema.String, { exact: true }),
  durationMs: Schema.Number,
  nextAttemptAt: Schema.optionalWith(Schema.String, { exact: true })
}).annotations({ identifier: "Delivery" })

/**
 * The reply of `webhookDeliveries`, newest first.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Deliveries = Schema.Struct({ deliveries: Schema.Array(Delivery) }).annotations({
  identifier: "Deliveries"
})
