/**
 * The stable `code` of every refusal the service answers with, and the one table that gives each its fixed
 * title and when it is sent, and, for a code the OpenAPI document shows a problem of, that problem's
 * description and example. The server's replies, the typed client's failures, the OpenAPI document and
 * docs/problems.md's table all read it; each code's HTTP status is the wire's (`ProblemStatus` in
 * `@filedata/client`).
 *
 * @since 0.2.0
 */
import { maxLimit, maxWait } from "./RequestSchema.js"

/**
 * Every problem code: its fixed `title`, and when it is sent. The code of each typed failure's
 * example also has the `example`'s `detail` and extension members, as the server sends them, and the
 * `description` of that failure's problem (covering every code of the failure) where `when` does not serve.
 *
 * @since 0.2.0
 * @category constants
 */
export const table = {
  validation_failed: {
    title: "Validation failed",
    when:
      "body empty, not UTF-8 JSON, not an object, a member named twice, a field missing / not a string / empty / breaking the text rules, an unknown field; for getSubmissions also `after` not a cursor of this file, `since` or `until` not an instant with a zone, `until` before `since`, `limit` not an integer from 1 to " +
      maxLimit +
      ", `wait` not an integer from 0 to " +
      maxWait +
      "; for getChanges also `after` not a feed cursor of this file, `limit` and `wait` as for getSubmissions; for exportSubmissions also `format` missing or not `csv` / `ndjson`, and `since`/`until` as for getSubmissions",
    description: "the request is not what the operation accepts",
    example: { detail: "/apiKey: is required", errors: [{ pointer: "/apiKey", detail: "is required" }] }
  },
  unsupported_media_type: {
    title: "Unsupported media type",
    when: "`Content-Type` missing or not `application/json`, or a `charset` other than `utf-8`"
  },
  payload_too_large: { title: "Payload too large", when: "body over 65 536 bytes" },
  unsupported_content_encoding: {
    title: "Unsupported content encoding",
    when: "a request body with a `Content-Encoding` other than `identity`; comes with `Accept-Encoding: identity`, the connection closes"
  },
  rate_limited: {
    title: "Too many requests",
    when: "the API key or the client address is over its quota; comes with `Retry-After`",
    description: "the API key or the client address is over its quota",
    example: { detail: "Too many requests for this API key; retry after 51 s", retryAfter: 51 }
  },
  access_denied: {
    title: "Access denied",
    when: "the key matches no active key, or its user does not own the file",
    example: { detail: "The API key does not grant access to this file" }
  },
  file_not_found: {
    title: "File not found",
    when: "valid key, no file with that id",
    description: "the key is valid, no file has this id",
    example: { detail: "No file has this id" }
  },
  webhook_not_found: {
    title: "Webhook not found",
    when: "valid key, no webhook of the key's user has that id (another user's is not told apart)",
    description: "the key is valid, none of its user's webhooks has this id",
    example: { detail: "No webhook of yours has this id" }
  },
  event_not_found: {
    title: "Event not found",
    when: "redeliver: the webhook has no event with that id",
    description: "the webhook has no event with this id",
    example: { detail: "This webhook has no event with this id" }
  },
  not_found: { title: "Not found", when: "no route at this path" },
  method_not_allowed: {
    title: "Method not allowed",
    when: "known path, other method; comes with `Allow`"
  },
  bad_request: {
    title: "Bad request",
    when: "the request is not valid HTTP/1.1 (malformed head, broken chunked framing, no `Host`, `Transfer-Encoding` in HTTP/1.0); the connection closes"
  },
  request_timeout: {
    title: "Request timeout",
    when: "a connection sent part of a request head and not the rest in time; the connection closes"
  },
  expectation_failed: {
    title: "Expectation failed",
    when: "an `Expect` header field other than `100-continue`"
  },
  uri_too_long: {
    title: "URI too long",
    when: "the request target alone is larger than the server reads (16 KiB); the connection closes"
  },
  request_header_fields_too_large: {
    title: "Request header fields too large",
    when: "the request head is larger than the server reads; the connection closes"
  },
  internal_error: {
    title: "Internal error",
    when: "an unexpected failure; the cause is logged, never returned",
    description: "an unexpected failure, logged by the server",
    example: { detail: "The request could not be completed" }
  },
  storage_unavailable: {
    title: "Service unavailable",
    when: "the database does not answer; comes with `Retry-After`",
    description: "storage or the rate limiter does not answer; retry later",
    example: { detail: "Storage is not available" }
  },
  rate_limiter_unavailable: {
    title: "Service unavailable",
    when: "the shared rate limiter does not answer and the service fails closed; comes with `Retry-After`"
  }
} as const

/**
 * @since 0.2.0
 * @category models
 */
export type ProblemCode = keyof typeof table

/**
 * The `type` member of a problem document of `code`.
 *
 * @since 0.2.0
 * @category getters
 */
export const type = (code: ProblemCode): string => `urn:filedata:problem:${code}`
