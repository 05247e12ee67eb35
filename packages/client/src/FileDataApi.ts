/**
 * The HTTP contract of the service as an `HttpApi`: the single definition the server routes by, the OpenAPI
 * document is generated from, and the typed client (`FileDataClient`) is built from.
 *
 * An operation on a file is added in one place: an endpoint in {@link FilesGroup} passed through
 * {@link fileDataOperation}, which gives it the problems and header fields every such operation shares.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  ChangesReply,
  Webhook as CoreWebhook,
  CreateWebhook,
  ExportSubmissions,
  FileData,
  GetChanges,
  GetFileData,
  GetSubmissions,
  ListWebhooks,
  ManageWebhook,
  RateLimiter,
  SubmissionsReply
} from "@filedata/core"
import * as Schema from "effect/Schema"
import * as ApiError from "./ApiError.js"
import * as internalOpenApi from "./internal/openApi.js"
import { problem } from "./internal/problem.js"

/**
 * The version of this package and of the API document it describes.
 *
 * @since 0.1.0
 * @category constants
 */
export const version = "0.3.0"

/**
 * Where `getFileData` lives.
 *
 * @since 0.1.0
 * @category constants
 */
export const fileDataPath = "/api/v1/file-data"

/**
 * Where `getSubmissions`, the incremental read, lives.
 *
 * @since 0.1.0
 * @category constants
 */
export const submissionsPath = "/api/v1/file-data/submissions"

/**
 * Where `getChanges`, the change feed, lives.
 *
 * @since 0.3.0
 * @category constants
 */
export const changesPath = "/api/v1/file-data/changes"

/**
 * Where `exportSubmissions` lives.
 *
 * @since 0.2.0
 * @category constants
 */
export const exportPath = "/api/v1/file-data/export"

/**
 * 422 `validation_failed`, `unsupported_media_type` or `payload_too_large` on the wire.
 *
 * @since 0.1.0
 * @category problems
 */
export const ValidationProblem = problem(ApiError.ValidationFailed, "validation_failed")

/**
 * 422 `rate_limited` on the wire.
 *
 * @since 0.1.0
 * @category problems
 */
export const RateLimitedProblem = problem(ApiError.RateLimited, "rate_limited")

/**
 * 403 `access_denied` on the wire.
 *
 * @since 0.1.0
 * @category problems
 */
export const AccessDeniedProblem = problem(ApiError.AccessDenied, "access_denied")

/**
 * 404 `file_not_found` on the wire.
 *
 * @since 0.1.0
 * @category problems
 */
export const FileNotFoundProblem = problem(ApiError.FileNotFound, "file_not_found")

/**
 * 404 `webhook_not_found` on the wire.
 *
 * @since 0.2.0
 * @category problems
 */
export const WebhookNotFoundProblem = problem(ApiError.WebhookNotFound, "webhook_not_found")

/**
 * 404 `event_not_found` on the wire.
 *
 * @since 0.2.0
 * @category problems
 */
export const EventNotFoundProblem = problem(ApiError.EventNotFound, "event_not_found")

/**
 * 503 `storage_unavailable` or `rate_limiter_unavailable` on the wire.
 *
 * @since 0.1.0
 * @category problems
 */
export const UnavailableProblem = problem(ApiError.ServiceUnavailable, "storage_unavailable")

/**
 * 500 `internal_error` on the wire.
 *
 * @since 0.1.0
 * @category problems
 */
export const InternalProblem = problem(ApiError.InternalError, "internal_error")

// The refusals every operation with a key shares (validation, rate limits, the key) and the one of what it
// names, in the order of checks, with the rate-limit header fields in the document.
const keyedOperation =
  <NotFound extends Schema.Schema.Any>(notFound: NotFound) =>
  <Name extends string, Method extends HttpMethod.HttpMethod, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
    endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
  ) =>
    endpoint
      .addError(ValidationProblem)
      .addError(RateLimitedProblem)
      .addError(AccessDeniedProblem)
      .addError(notFound)
      .annotate(OpenApi.Transform, internalOpenApi.fileDataOperation)

/**
 * Gives an operation on a file what all of them share: the refusals of the order of checks (validation,
 * rate limit, access, file not found) and the rate-limit header fields in the document.
 *
 * @since 0.1.0
 * @category combinators
 */
export const fileDataOperation = keyedOperation(FileNotFoundProblem)

// The same for an operation on one of the caller's webhooks, which it may not find.
const webhookOperation = keyedOperation(WebhookNotFoundProblem)

/**
 * The operations on a file.
 *
 * @since 0.1.0
 * @category groups
 */
export class FilesGroup extends HttpApiGroup.make("files")
  .annotate(
    OpenApi.Description,
    "A file's metadata, counters and submissions, to the file's owner: whole, page by page, or exported"
  )
  .add(
    fileDataOperation(
      HttpApiEndpoint.post("getFileData", fileDataPath)
        .setPayload(GetFileData.RequestJson)
        .addSuccess(FileData.FileData)
        .annotate(OpenApi.Summary, "Get a file's metadata, counters and every submission")
        .annotate(
          OpenApi.Description,
          "The API key's user must own the file. Submissions are in ascending createdDate, ties in insertion order."
        )
    )
  )
  .add(
    fileDataOperation(
      HttpApiEndpoint.post("getSubmissions", submissionsPath)
        .setPayload(GetSubmissions.RequestJson)
        .addSuccess(SubmissionsReply.SubmissionsPage)
        .annotate(OpenApi.Summary, "Get a file's submissions page by page, and what was added since")
        .annotate(
          OpenApi.Description,
          [
            "For clients that sync. The same authorisation, checks, refusals and rate limits as getFileData (both count",
            "against the same quotas). The reply holds at most limit submissions (default 1000) with",
            "since <= createdDate < until, after the cursor given as after, in ascending createdDate, ties in insertion",
            "order, each with its id; next is the cursor after its last submission and hasMore says whether more",
            "matched. Sending next back as after continues there, later too: it then returns the submissions appended",
            "since whose createdDate is not before that of the last submission returned (a backdated append or an",
            "erasure is not seen: the change feed, getChanges, tells every change). A cursor belongs to its file: any",
            "other after is a 422 validation_failed naming /after, as are since, until and limit out of range."
          ].join(" ")
        )
    )
  )
  .add(
    fileDataOperation(
      HttpApiEndpoint.post("getChanges", changesPath)
        .setPayload(GetChanges.RequestJson)
        .addSuccess(ChangesReply.ChangesPage)
        .annotate(OpenApi.Summary, "Get a file's changes in commit order: every submission stored or erased")
        .annotate(
          OpenApi.Description,
          [
            "For pipelines and warehouses that must miss nothing. The same authorisation, checks, refusals and rate",
            "limits as getFileData. The reply holds at most limit changes (default 1000) after the feed cursor given as",
            "after (without it, from the file's first change), in commit order: a change committed after another comes",
            "after it, whatever the submissions' createdDate. submission.created carries the submission with its id;",
            "submission.erased its id only, and the erased submission's submission.created is no longer in the feed.",
            "next is the cursor after the last change (the after sent, when there is none) and hasMore says whether",
            "more were committed; reading after each next in turn sees every change exactly once. wait (0 to 30 s)",
            "holds a request that finds no change until one is committed. A webhook event's changesNext is a cursor",
            "of this feed. Any other after, a cursor of getSubmissions or of another file included, is a 422",
            "validation_failed naming /after, as are limit and wait out of range."
          ].join(" ")
        )
    )
  )
  .add(
    fileDataOperation(
      HttpApiEndpoint.post("exportSubmissions", exportPath)
        .setPayload(ExportSubmissions.RequestJson)
        .addSuccess(HttpApiSchema.Text({ contentType: "text/csv; charset=utf-8" }))
        .annotate(OpenApi.Summary, "Export a file's submissions as CSV or NDJSON, streamed")
        .annotate(
          OpenApi.Description,
          [
            "For spreadsheets and pipelines. The same authorisation, checks, refusals and rate limits as getFileData.",
            "Every submission with since <= createdDate < until, in ascending createdDate (ties in insertion order), as",
            "an attachment named after the file id (Content-Disposition). csv: RFC 4180 with CRLF, the header",
            "createdDate then every content name of the file in the order the file first received them; a cell",
            "beginning with = + - @ TAB or CR is prefixed with ' against formula injection. ndjson",
            '(application/x-ndjson): one submission per line, {"id", "createdDate", "content"}: the File reply\'s',
            "submission with its id first."
          ].join(" ")
        )
    ).annotate(OpenApi.Transform, internalOpenApi.exportOperation)
  ) {}

/**
 * Where the webhook operations live: `/api/v1/webhooks/<operation>`.
 *
 * @since 0.2.0
 * @category constants
 */
export const webhooksPath = "/api/v1/webhooks"

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
  disabledReason: Schema.optionalWith(CoreWebhook.DisabledReason, { exact: true })
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
  outcome: CoreWebhook.DeliveryOutcome,
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

/**
 * The webhook operations: a file's owner registers HTTPS endpoints that receive its new submissions, signed as
 * Standard Webhooks says.
 *
 * @since 0.2.0
 * @category groups
 */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .annotate(
    OpenApi.Description,
    "HTTPS endpoints of a file's owner that receive the file's new submissions, signed as Standard Webhooks says"
  )
  .add(
    fileDataOperation(
      HttpApiEndpoint.post("createWebhook", `${webhooksPath}/create`)
        .setPayload(CreateWebhook.RequestJson)
        .addSuccess(CreatedWebhook, { status: 201 })
        .annotate(OpenApi.Summary, "Register a webhook on a file; its secret is shown here only")
    )
  )
  .add(
    fileDataOperation(
      HttpApiEndpoint.post("listWebhooks", `${webhooksPath}/list`)
        .setPayload(ListWebhooks.RequestJson)
        .addSuccess(WebhookList)
        .annotate(OpenApi.Summary, "The caller's webhooks, of one file when fileId is given")
    )
  )
  .add(
    webhookOperation(
      HttpApiEndpoint.post("deleteWebhook", `${webhooksPath}/delete`)
        .setPayload(ManageWebhook.RequestJson.target)
        .addSuccess(HttpApiSchema.NoContent)
        .annotate(OpenApi.Summary, "Delete a webhook; nothing more is delivered to it")
    )
  )
  .add(
    webhookOperation(
      HttpApiEndpoint.post("enableWebhook", `${webhooksPath}/enable`)
        .setPayload(ManageWebhook.RequestJson.target)
        .addSuccess(Webhook)
        .annotate(OpenApi.Summary, "Enable a webhook again; events of the time it was disabled are not sent")
    )
  )
  .add(
    webhookOperation(
      HttpApiEndpoint.post("rotateWebhookSecret", `${webhooksPath}/rotate-secret`)
        .setPayload(ManageWebhook.RequestJson.target)
        .addSuccess(RotatedSecret)
        .annotate(OpenApi.Summary, "A new secret, shown here only; the old one also signs for 24 h")
    )
  )
  .add(
    webhookOperation(
      HttpApiEndpoint.post("webhookDeliveries", `${webhooksPath}/deliveries`)
        .setPayload(ManageWebhook.RequestJson.deliveries)
        .addSuccess(Deliveries)
        .annotate(OpenApi.Summary, "The webhook's last attempts, newest first")
    )
  )
  .add(
    webhookOperation(
      HttpApiEndpoint.post("redeliverWebhookEvent", `${webhooksPath}/redeliver`)
        .setPayload(ManageWebhook.RequestJson.redeliver)
        .addSuccess(HttpApiSchema.Empty(202))
        .annotate(OpenApi.Summary, "Send an event again under the same webhook-id, at once, then on the schedule")
    ).addError(EventNotFoundProblem)
  ) {}

/**
 * The `/health` reply while storage answers, with how the rate limiter counts at the moment.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  rateLimiter: Schema.optionalWith(RateLimiter.Counting, { exact: true }),
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
 * Liveness with a storage check, for load balancers.
 *
 * @since 0.1.0
 * @category groups
 */
export class SystemGroup extends HttpApiGroup.make("system")
  .annotate(OpenApi.Description, "The service's own state, for load balancers and monitoring; no key")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .annotate(OpenApi.Summary, "200 while the database answers, 503 otherwise")
      .annotate(OpenApi.Transform, internalOpenApi.healthOperation)
  ) {}

// A self-hosted service has no one address: `/` is the server that serves the document (its `/openapi.json`,
// Swagger UI's "Try it out"); the template serves a copy read elsewhere, by a code generator or an HTTP client.
const servers: ReadonlyArray<OpenApi.OpenAPISpecServer> = [
  { url: "/", description: "The server that serves this document" },
  {
    url: "{scheme}://{host}:{port}",
    description:
      "A filedata server of your own: where it or its TLS-terminating proxy listens (`PORT`: 3000 unless set)",
    // No description on a variable: @apidevtools/swagger-parser's OpenAPI 3.1 schema refuses one.
    variables: {
      scheme: { default: "http", enum: ["http", "https"] },
      host: { default: "127.0.0.1" },
      port: { default: "3000" }
    }
  }
]

// SPDX `identifier`, which OpenAPI 3.1 adds and some validators require beside `name`; Effect's license type
// predates it.
const license: OpenApi.OpenAPISpecLicense = Object.assign({ name: "MIT" }, { identifier: "MIT" })

const authentication = [
  "**Authentication.** Every operation on a file or a webhook takes the caller's API key in its JSON body, as",
  "`apiKey`, never in a header field: an `Authorization` header is ignored and a body without `apiKey` is a 422",
  "`validation_failed` naming `/apiKey`. No OpenAPI security scheme describes a key in a body, so the document",
  "declares none (`security: []`), and `/health` needs no key."
].join(" ")

/**
 * The whole API. Every operation may also answer 503 (storage or rate limiter away) and 500.
 *
 * @since 0.1.0
 * @category api
 */
export class FileDataApi extends HttpApi.make("filedata")
  .add(FilesGroup)
  .add(WebhooksGroup)
  .add(SystemGroup)
  .addError(UnavailableProblem)
  .addError(InternalProblem)
  .annotate(OpenApi.Title, "filedata")
  .annotate(OpenApi.Version, version)
  .annotate(OpenApi.License, license)
  .annotate(OpenApi.Servers, servers)
  .annotate(
    OpenApi.Description,
    [
      "Returns a form file's metadata, counters and every submission it received, to the file's owner, whole",
      "(getFileData) or page by page with a cursor that later returns what was added since (getSubmissions), and",
      "every change of a file in commit order, submissions stored and erased (getChanges).",
      "",
      authentication,
      "",
      "Every error reply is an RFC 9457 problem document (`application/problem+json`) with a stable `code`:",
      "",
      internalOpenApi.problemCodeTable()
    ].join("\n")
  )
  .annotate(OpenApi.Transform, internalOpenApi.clientAuthorView) {}
