/**
 * Failures as the service answers them: every refusal is an RFC 9457 problem document with a stable `code` and
 * the status of `ProblemStatus`, and none repeats what the caller sent. The server answers with these, so a
 * service that embeds the core and answers with {@link fromFailure} answers exactly as filedata does.
 *
 * @since 0.2.0
 */
import { type FileDataError, ProblemCode, type Webhook } from "@filedata/core"
import * as ProblemStatus from "./ProblemStatus.js"

/**
 * A problem reply, independent of the transport that sends it: `body` is the document's JSON text.
 *
 * @since 0.2.0
 * @category models
 */
export interface Problem {
  readonly status: number
  readonly code: ProblemCode.ProblemCode
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * The media type of a problem reply.
 *
 * @since 0.2.0
 * @category constants
 */
export const contentType = "application/problem+json"

/**
 * A problem reply of `code`, with its status (`ProblemStatus`) and the title `ProblemCode.table` gives it;
 * `extensions` are extra members such as `errors` or `retryAfter`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (
  code: ProblemCode.ProblemCode,
  detail: string,
  options?: {
    readonly extensions?: Record<string, unknown> | undefined
    readonly headers?: Record<string, string> | undefined
  }
): Problem => ({
  status: ProblemStatus.status(code),
  code,
  headers: options?.headers ?? {},
  body: JSON.stringify({
    type: ProblemCode.type(code),
    title: ProblemCode.table[code].title,
    status: ProblemStatus.status(code),
    detail,
    code,
    ...options?.extensions
  })
})

/**
 * Every failure an operation of the core ends with: those of the operations on a file, and the webhooks' 404s.
 *
 * @since 0.2.0
 * @category models
 */
export type Failure = FileDataError.GetFileDataError | Webhook.WebhookNotFound | Webhook.WebhookEventNotFound

const invalidRequestCodes: Record<FileDataError.InvalidRequest["reason"], ProblemCode.ProblemCode> = {
  UnsupportedMediaType: "unsupported_media_type",
  PayloadTooLarge: "payload_too_large",
  MalformedJson: "validation_failed",
  InvalidPayload: "validation_failed"
}

/**
 * The reply the server sends for `failure`: status, header fields (`Retry-After`, `Connection: close`) and the
 * problem document.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromFailure = (failure: Failure): Problem => {
  switch (failure._tag) {
    case "InvalidRequest":
      return make(invalidRequestCodes[failure.reason], failure.message, {
        extensions:
          failure.omitted > 0 ? { errors: failure.issues, omitted: failure.omitted } : { errors: failure.issues },
        // An oversized body is not read to its end; closing spares the server from draining it.
        headers: failure.reason === "PayloadTooLarge" ? { connection: "close" } : undefined
      })
    case "RateLimited": {
      const retryAfter = Math.max(1, Math.ceil(failure.retryAfterMillis / 1000))
      return make("rate_limited", `${failure.message}; retry after ${retryAfter} s`, {
        extensions: { retryAfter },
        headers: { "retry-after": String(retryAfter) }
      })
    }
    case "AccessDenied":
      return make("access_denied", failure.message)
    case "FileNotFound":
      return make("file_not_found", failure.message)
    case "WebhookNotFound":
      return make("webhook_not_found", failure.message)
    case "WebhookEventNotFound":
      return make("event_not_found", failure.message)
    case "StorageUnavailable":
      return make("storage_unavailable", failure.message, { headers: { "retry-after": "1" } })
    case "RateLimiterUnavailable":
      return make("rate_limiter_unavailable", failure.message, { headers: { "retry-after": "1" } })
  }
}
