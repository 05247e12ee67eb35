/**
 * The one place where failures become HTTP statuses: every error reply is an RFC 9457 problem document
 * with a stable `code`, and none repeats what the caller sent.
 *
 * @since 0.1.0
 */

import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ProblemDocument } from "@filedata/client"

/**
 * A problem reply, independent of the transport that sends it (`ProblemDocument.Problem`).
 *
 * @since 0.1.0
 * @category models
 */
export type Problem = ProblemDocument.Problem

/**
 * @since 0.1.0
 * @category constants
 */
export const contentType = ProblemDocument.contentType

/**
 * A problem reply of `code` (`ProblemDocument.make`, which embedding services use too).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = ProblemDocument.make
/**
 * 500: anything the service did not expect; the cause goes to the log, never to the client.
 *
 * @since 0.1.0
 * @category constants
 */
export const internalError: Problem = make("internal_error", "The request could not be completed")

/**
 * 404: no resource at the path.
 *
 * @since 0.1.0
 * @category constants
 */
export const notFound: Problem = make("not_found", "No resource at this path")

/**
 * 405: the path is known, the method is not; `allowed` are the methods that are.
 *
 * @since 0.1.0
 * @category constructors
 */
export const methodNotAllowed = (allowed: ReadonlyArray<string>): Problem =>
  make("method_not_allowed", `Use ${allowed.join(", ")} on this path`, { headers: { allow: allowed.join(", ") } })

/**
 * 400: the request is not valid HTTP/1.1 (request line, header fields, framing), so it reaches no route.
 *
 * @since 0.1.0
 * @category constants
 */
export const badRequest: Problem = make("bad_request", "The request is not valid HTTP/1.1")

/**
 * 400: an HTTP/1.1 request without a `Host` header field, which RFC 9112 requires a server to refuse.
 *
 * @since 0.1.0
 * @category constants
 */
export const missingHost: Problem = make("bad_request", "An HTTP/1.1 request must carry a Host header field")

/**
 * 400: an HTTP/1.0 request with `Transfer-Encoding`, which RFC 9112 (section 6.1) treats as faulty framing.
 *
 * @since 0.2.0
 * @category constants
 */
export const transferEncodingInHttp10: Problem = make(
  "bad_request",
  "An HTTP/1.0 request cannot carry Transfer-Encoding"
)

/**
 * 415: a request body in a content coding other than identity, which the server does not decode; RFC 9110
 * (section 15.5.16) has the reply name the codings it accepts.
 *
 * @since 0.2.0
 * @category constants
 */
export const unsupportedContentEncoding: Problem = make(
  "unsupported_content_encoding",
  "A request body must be sent without Content-Encoding (identity)",
  { headers: { "accept-encoding": "identity" } }
)

/**
 * 408: the request head, or the whole request, did not arrive in time (`HTTP_HEADERS_TIMEOUT_MS`,
 * `HTTP_REQUEST_TIMEOUT_MS`, `HTTP_FIRST_REQUEST_TIMEOUT_MS`).
 *
 * @since 0.1.0
 * @category constants
 */
export const requestTimeout: Problem = make("request_timeout", "The request did not arrive in time")

/**
 * 417: an `Expect` header field other than `100-continue`, the only expectation the server meets.
 *
 * @since 0.1.0
 * @category constants
 */
export const expectationFailed: Problem = make(
  "expectation_failed",
  "The only expectation this server meets is 100-continue"
)

/**
 * 414: the request target alone is larger than the server reads.
 *
 * @since 0.2.0
 * @category constants
 */
export const uriTooLong: Problem = make("uri_too_long", "The request target is too long")

/**
 * 431: the request's header fields are larger than the server reads.
 *
 * @since 0.1.0
 * @category constants
 */
export const requestHeaderFieldsTooLarge: Problem = make(
  "request_header_fields_too_large",
  "The request's header fields are too large"
)

/**
 * The problem as a platform response.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toResponse = (problem: Problem): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(problem.body, { status: problem.status, contentType, headers: problem.headers })

/**
 * The reply for each failure of an operation (`ProblemDocument.fromFailure`, which embedding services use too).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFailure = ProblemDocument.fromFailure
