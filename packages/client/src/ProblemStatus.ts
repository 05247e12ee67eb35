/**
 * The HTTP status of every problem code: the wire's half of the core's `ProblemCode` table, which knows the
 * codes and their words but no HTTP. The server answers with these statuses, and the typed client, the OpenAPI
 * document and docs/problems.md's table show them.
 *
 * @since 0.2.0
 */
import type { ProblemCode } from "@filedata/core"

/**
 * The status of each code.
 *
 * @since 0.2.0
 * @category constants
 */
export const table = {
  validation_failed: 422,
  unsupported_media_type: 422,
  payload_too_large: 422,
  unsupported_content_encoding: 415,
  rate_limited: 422,
  access_denied: 403,
  file_not_found: 404,
  webhook_not_found: 404,
  event_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  bad_request: 400,
  request_timeout: 408,
  expectation_failed: 417,
  uri_too_long: 414,
  request_header_fields_too_large: 431,
  internal_error: 500,
  storage_unavailable: 503,
  rate_limiter_unavailable: 503
} as const satisfies Record<ProblemCode.ProblemCode, number>

/**
 * The HTTP status of `code`.
 *
 * @since 0.2.0
 * @category getters
 */
export const status = <C extends ProblemCode.ProblemCode>(code: C): Status<C> => table[code]

/**
 * The status of `C`, as a literal type.
 *
 * @since 0.2.0
 * @category models
 */
export type Status<C extends ProblemCode.ProblemCode> = (typeof table)[C]
