/**
 * The service's refusals as typed failures. On the wire each is an RFC 9457 problem document
 * (`application/problem+json`) with a stable `code`; the client decodes it, by status and `code`, into one
 * of these classes, so a caller matches on `_tag` (`Effect.catchTag("RateLimited", ...)`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The machine-readable `code` of every problem the service answers with: its status, its fixed `title`, and
 * when it is sent.
 *
 * @since 0.1.0
 * @category models
 */
export const problemCodes = {
  validation_failed: {
    status: 422,
    title: "Validation failed",
    when: "body empty, not UTF-8 JSON, not an object, a member named twice, a field missing / not a string / empty / breaking the text rules, an unknown field; for getSubmissions also `after` not a cursor of this file, `since` or `until` not an instant with a zone, `until` before `since`, `limit` not an integer from 1 to 10000"
  },
  unsupported_media_type: {
    status: 422,
    title: "Unsupported media type",
    when: "`Content-Type` missing or not `application/json`, or a `charset` other than `utf-8`"
  },
  payload_too_large: { status: 422, title: "Payload too large", when: "body over 65 536 bytes" },
  rate_limited: {
    status: 422,
    title: "Too many requests",
    when: "the API key or the client address is over its quota; comes with `Retry-After`"
  },
  access_denied: {
    status: 403,
    title: "Access denied",
    when: "the key matches no active key, or its user does not own the file"
  },
  file_not_found: { status: 404, title: "File not found", when: "valid key, no file with that id" },
  not_found: { status: 404, title: "Not found", when: "no route at this path" },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    when: "known path, other method; comes with `Allow`"
  },
  bad_request: {
    status: 400,
    title: "Bad request",
    when: "the request is not valid HTTP/1.1 (malformed head, broken chunked framing, no `Host`); the connection closes"
  },
  request_timeout: {
    status: 408,
    title: "Request timeout",
    when: "a connection sent part of a request head and not the rest in time; the connection closes"
  },
  expectation_failed: {
    status: 417,
    title: "Expectation failed",
    when: "an `Expect` header field other than `100-continue`"
  },
  request_header_fields_too_large: {
    status: 431,
    title: "Request header fields too large",
    when: "the request head is larger than the server reads; the connection closes"
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    when: "an unexpected failure; the cause is logged, never returned"
  },
  storage_unavailable: {
    status: 503,
    title: "Service unavailable",
    when: "the database does not answer; comes with `Retry-After`"
  },
  rate_limiter_unavailable: {
    status: 503,
    title: "Service unavailable",
    when: "the shared rate limiter does not answer and the service fails closed; comes with `Retry-After`"
  }
} as const

/**
 * @since 0.1.0
 * @category models
 */
export type ProblemCode = keyof typeof problemCodes

const problemFields = <const Status extends number, const Code extends ProblemCode>(
  status: Status,
  codes: readonly [Code, ...Array<Code>]
) => ({
  type: Schema.String.annotations({ description: "`urn:filedata:problem:<code>`" }),
  title: Schema.String.annotations({ description: "A fixed text for the code" }),
  status: Schema.Literal(status).annotations({ description: "The HTTP status" }),
  detail: Schema.String.annotations({
    description: "Human-readable; fixed texts that never repeat a value that was sent"
  }),
  code: Schema.Literal(...codes).annotations({ description: "Stable and machine-readable: branch on this" })
})

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
export const issueLimit = 20

/**
 * 422: the request is not what the operation accepts; `errors` lists its problems by JSON Pointer, at most
 * {@link issueLimit} of them, and `omitted` counts the rest (absent when `errors` lists them all).
 *
 * @since 0.1.0
 * @category errors
 */
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  ...problemFields(422, ["validation_failed", "unsupported_media_type", "payload_too_large"]),
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
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.detail
  }
}

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
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...problemFields(422, ["rate_limited"]),
  retryAfter: RetryAfterSeconds
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.detail
  }
}

/**
 * 403: the key matches no active key, or its user does not own the file (the two are not told apart).
 *
 * @since 0.1.0
 * @category errors
 */
export class AccessDenied extends Schema.TaggedError<AccessDenied>()(
  "AccessDenied",
  problemFields(403, ["access_denied"])
) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.detail
  }
}

/**
 * 404: the key is valid but no file has this id.
 *
 * @since 0.1.0
 * @category errors
 */
export class FileNotFound extends Schema.TaggedError<FileNotFound>()(
  "FileNotFound",
  problemFields(404, ["file_not_found"])
) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.detail
  }
}

/**
 * 503: storage, or a rate limiter configured to fail closed, does not answer; retry later.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  problemFields(503, ["storage_unavailable", "rate_limiter_unavailable"])
) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.detail
  }
}

/**
 * 500: the service failed unexpectedly; its log has the cause, the reply never does.
 *
 * @since 0.1.0
 * @category errors
 */
export class InternalError extends Schema.TaggedError<InternalError>()(
  "InternalError",
  problemFields(500, ["internal_error"])
) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.detail
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
