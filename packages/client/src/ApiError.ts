/**
 * The service's refusals as typed failures. On the wire each is an RFC 9457 problem document
 * (`application/problem+json`) with a stable `code`; the client decodes it, by status and `code`, into one
 * of these classes, so a caller matches on `_tag` (`Effect.catchTag("RateLimited", ...)`).
 *
 * @since 0.1.0
 */
import { ProblemCode as Codes, FileDataError } from "@filedata/core"
import * as Record from "effect/Record"
import * as Schema from "effect/Schema"
import * as ProblemStatus from "./ProblemStatus.js"

/**
 * The machine-readable `code` of every problem the service answers with: its status (`ProblemStatus`), its
 * fixed `title`, and when it is sent (the core's `ProblemCode.table`).
 *
 * @since 0.1.0
 * @category models
 */
export const problemCodes: {
  readonly [C in ProblemCode]: { readonly status: ProblemStatus.Status<C> } & (typeof Codes.table)[C]
} = // `Record.map` types every entry alike; each keeps its own status and words.
  Record.map(Codes.table, (entry, code) => ({ status: ProblemStatus.status(code), ...entry })) as never

/**
 * @since 0.1.0
 * @category models
 */
export type ProblemCode = Codes.ProblemCode

// The fields of the problems of `codes`, which share one status (the table's).
const problemFields = <const Code extends ProblemCode>(codes: readonly [Code, ...Array<Code>]) => ({
  type: Schema.String.annotations({ description: "`urn:filedata:problem:<code>`" }),
  title: Schema.String.annotations({ description: "A fixed text for the code" }),
  status: Schema.Literal(ProblemStatus.status(codes[0])).annotations({ description: "The HTTP status" }),
  detail: Schema.String.annotations({
    description: "Human-readable; fixed texts that never repeat a value that was sent"
  }),
  code: Schema.Literal(...codes).annotations({ description: "Stable and machine-readable: branch on this" })
})

// A refusal's typed failure: the class of its problem document's fields, its message the document's `detail`.
const ProblemError =
  <Self>() =>
  <Tag extends string, Fields extends Schema.Struct.Fields & { readonly detail: typeof Schema.String }>(
    tag: Tag,
    fields: Fields
  ): Schema.TaggedErrorClass<Self, Tag, { readonly _tag: Schema.tag<Tag> } & Fields> => {
    const Base = Schema.TaggedError<Self>()(tag, fields) as unknown as new (
      ...args: ReadonlyArray<unknown>
    ) => { readonly detail: string }
    return class extends Base {
      get message(): string {
        return this.detail
      }
    } as never
  }

/**
 * One reason a request was refused, located by a JSON Pointer (RFC 6901) into the request body; `""` is the
 * whole body.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ValidationIssue = Schema.Struct({
  pointer: Schema.String,
  detail: Schema.String
}).annotations({ identifier: "ValidationIssue" })

/**
 * @since 0.1.0
 * @category models
 */
export type ValidationIssue = typeof ValidationIssue.Type

/**
 * The most problems a refusal lists in `errors`; `omitted` counts the rest, so a body crafted to fail in
 * thousands of places gets a reply of bounded size.
 *
 * @since 0.1.0
 * @category constants
 */
export const issueLimit = FileDataError.issueLimit

/**
 * 422: the request is not what the operation accepts; `errors` lists its problems by JSON Pointer, at most
 * {@link issueLimit} of them, and `omitted` counts the rest (absent when `errors` lists them all).
 *
 * @since 0.1.0
 * @category errors
 */
export class ValidationFailed extends ProblemError<ValidationFailed>()("ValidationFailed", {
  ...problemFields(["validation_failed", "unsupported_media_type", "payload_too_large"]),
  errors: Schema.Array(ValidationIssue)
    .pipe(Schema.maxItems(issueLimit))
    .annotations({
      title: "Problems",
      description: `Each problem by JSON Pointer, at most ${issueLimit}; omitted counts the rest`
    }),
  omitted: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1)).annotations({
      title: "Count",
      description: "How many problems were found beyond those in errors; absent when errors lists them all"
    }),
    { exact: true }
  )
}) {}

/**
 * Seconds to wait before the quota admits the caller again.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RetryAfterSeconds = Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1)).annotations({
  title: "Seconds",
  description: "Seconds until the quota admits the caller again; the same value as the Retry-After header"
})

/**
 * 422: the API key or the client address used up its quota; retry after `retryAfter` seconds.
 *
 * @since 0.1.0
 * @category errors
 */
export class RateLimited extends ProblemError<RateLimited>()("RateLimited", {
  ...problemFields(["rate_limited"]),
  retryAfter: RetryAfterSeconds
}) {}

/**
 * 403: the key matches no active key, or its user does not own the file (the two are not told apart).
 *
 * @since 0.1.0
 * @category errors
 */
export class AccessDenied extends ProblemError<AccessDenied>()("AccessDenied", problemFields(["access_denied"])) {}

/**
 * 404: the key is valid but no file has this id.
 *
 * @since 0.1.0
 * @category errors
 */
export class FileNotFound extends ProblemError<FileNotFound>()("FileNotFound", problemFields(["file_not_found"])) {}

/**
 * 404: the key is valid but none of its user's webhooks has this id.
 *
 * @since 0.2.0
 * @category errors
 */
export class WebhookNotFound extends ProblemError<WebhookNotFound>()(
  "WebhookNotFound",
  problemFields(["webhook_not_found"])
) {}

/**
 * 404: the webhook has no event with this id (redeliver).
 *
 * @since 0.2.0
 * @category errors
 */
export class EventNotFound extends ProblemError<EventNotFound>()("EventNotFound", problemFields(["event_not_found"])) {}

/**
 * 503: storage, or a rate limiter configured to fail closed, does not answer; retry later.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServiceUnavailable extends ProblemError<ServiceUnavailable>()(
  "ServiceUnavailable",
  problemFields(["storage_unavailable", "rate_limiter_unavailable"])
) {}

/**
 * 500: the service failed unexpectedly; its log has the cause, the reply never does.
 *
 * @since 0.1.0
 * @category errors
 */
export class InternalError extends ProblemError<InternalError>()("InternalError", problemFields(["internal_error"])) {}

/**
 * No reply: the connection to `url` was refused, or its host could not be found or reached (`reason`, the system's
 * code such as `ECONNREFUSED`). Not a problem document; no request reached the service.
 *
 * @since 0.2.0
 * @category errors
 */
export class Unreachable extends Schema.TaggedError<Unreachable>()("Unreachable", {
  url: Schema.String,
  reason: Schema.String
}) {
  /**
   * The address and why it could not be reached.
   *
   * @since 0.2.0
   */
  override get message(): string {
    return `${this.url} cannot be reached (${this.reason})`
  }
}

/**
 * Every refusal of the file-data operations.
 *
 * @since 0.1.0
 * @category models
 */
export type FileDataFailure =
  | ValidationFailed
  | RateLimited
  | AccessDenied
  | FileNotFound
  | ServiceUnavailable
  | InternalError
