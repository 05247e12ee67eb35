/**
 * The typed failures of the core. The HTTP app maps each one to a status in one place.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * One reason a request was refused, located by a JSON Pointer (RFC 6901) into the request body.
 *
 * @since 0.1.0
 * @category models
 */
export class Issue extends Schema.Class<Issue>("RequestIssue")({
  pointer: Schema.String,
  detail: Schema.String
}) {}

/**
 * The request is not what the operation accepts: wrong media type, too large, not JSON, or not the payload.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  reason: Schema.Literal("UnsupportedMediaType", "PayloadTooLarge", "MalformedJson", "InvalidPayload"),
  issues: Schema.Array(Issue)
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.issues.map((issue) => `${issue.pointer === "" ? "body" : issue.pointer}: ${issue.detail}`).join("; ")
  }
}

/**
 * Which counter a rate limit is kept on.
 *
 * @since 0.1.0
 * @category models
 */
export const RateLimitScope = Schema.Literal("apiKey", "clientAddress")

/**
 * @since 0.1.0
 * @category models
 */
export type RateLimitScope = typeof RateLimitScope.Type

/**
 * The caller used up its requests for the current window.
 *
 * @since 0.1.0
 * @category errors
 */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  scope: RateLimitScope,
  limit: Schema.Number,
  retryAfterMillis: Schema.Number
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return `Too many requests for this ${this.scope === "apiKey" ? "API key" : "client address"}`
  }
}

/**
 * The API key matches no active key, or its user does not own the file. The two are deliberately alike.
 *
 * @since 0.1.0
 * @category errors
 */
export class AccessDenied extends Schema.TaggedError<AccessDenied>()("AccessDenied", {}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return "The API key does not grant access to this file"
  }
}

/**
 * The key is valid but no file has the requested id.
 *
 * @since 0.1.0
 * @category errors
 */
export class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", {}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return "No file has this id"
  }
}

/**
 * Storage did not answer; the request may succeed later.
 *
 * @since 0.1.0
 * @category errors
 */
export class StorageUnavailable extends Schema.TaggedError<StorageUnavailable>()("StorageUnavailable", {
  cause: Schema.Defect
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return "Storage is not available"
  }
}

/**
 * The rate limiter's shared store did not answer and the limiter is configured to refuse rather than admit.
 *
 * @since 0.1.0
 * @category errors
 */
export class RateLimiterUnavailable extends Schema.TaggedError<RateLimiterUnavailable>()("RateLimiterUnavailable", {
  cause: Schema.Defect
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return "Rate limiting is not available"
  }
}

/**
 * Every failure the `GetFileData` use case can end with.
 *
 * @since 0.1.0
 * @category errors
 */
export type GetFileDataError =
  | InvalidRequest
  | RateLimited
  | RateLimiterUnavailable
  | AccessDenied
  | FileNotFound
  | StorageUnavailable

/**
 * Every failure the `GetSubmissions` use case can end with: the same as `GetFileData`'s, since both apply the
 * same rules (`FileRequest`).
 *
 * @since 0.1.0
 * @category errors
 */
export type GetSubmissionsError = GetFileDataError
