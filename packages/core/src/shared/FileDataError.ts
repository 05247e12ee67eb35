/**
 * The typed failures of the core. The HTTP app maps each one to a status in one place.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { FileId, UserId } from "./FileData.js"
import * as Failure from "./internal/failure.js"

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
 * The JSON Pointer (RFC 6901) of the member at `path` in the request body; `""` for the body itself.
 *
 * @since 0.2.0
 * @category constructors
 */
export const pointer = (...path: ReadonlyArray<PropertyKey>): string => {
  let text = ""
  for (const token of path) text += `/${String(token).replaceAll("~", "~0").replaceAll("/", "~1")}`
  return text
}

/**
 * The most issues a refusal lists; the rest are only counted. A body of 64 KiB can hold thousands of
 * problems, and listing each would make the reply many times the size of the request.
 *
 * @since 0.1.0
 * @category constants
 */
export const issueLimit = 20

/**
 * The characters of pointers a refusal lists at most, beyond its first issue: pointers of nested members
 * repeat their parents' names, so a few long names could otherwise fill a reply.
 *
 * @since 0.1.0
 * @category constants
 */
export const pointerBudget = 4096

/**
 * The most characters of an {@link InvalidRequest}'s message, which the reply shows as its `detail`.
 *
 * @since 0.1.0
 * @category constants
 */
export const messageLimit = 1024

/**
 * The request is not what the operation accepts: wrong media type, too large, not JSON, or not the payload.
 * Build it with {@link invalidRequest}, which keeps the list within {@link issueLimit} and
 * {@link pointerBudget}.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  reason: Schema.Literal("UnsupportedMediaType", "PayloadTooLarge", "MalformedJson", "InvalidPayload"),
  issues: Schema.Array(Issue),
  /** Issues found beyond those listed. */
  omitted: Schema.optionalWith(Schema.NonNegativeInt, { default: () => 0 })
}) {
  /**
   * The issues as `pointer: detail` joined by `; `, then how many more there are, cut at {@link messageLimit}.
   *
   * @since 0.1.0
   */
  override get message(): string {
    const parts = this.issues.map((issue) => `${issue.pointer === "" ? "body" : issue.pointer}: ${issue.detail}`)
    if (this.omitted > 0) parts.push(`and ${this.omitted} more`)
    const text = parts.join("; ")
    if (text.length <= messageLimit) return text
    // Cut before a surrogate pair rather than through it.
    const end = /[\uD800-\uDBFF]/.test(text.charAt(messageLimit - 2)) ? messageLimit - 2 : messageLimit - 1
    return `${text.slice(0, end)}…`
  }
}

/**
 * An {@link InvalidRequest} listing `issues` in order while they fit {@link issueLimit} and
 * {@link pointerBudget} (the first always does) and counting the rest, with `unlisted` more found but
 * never made into issues. An issue may be an {@link Issue} or a plain `{ pointer, detail }`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const invalidRequest = (
  reason: InvalidRequest["reason"],
  issues: Iterable<Issue | { readonly pointer: string; readonly detail: string }>,
  unlisted = 0
): InvalidRequest => {
  const listed: Array<Issue> = []
  let omitted = unlisted
  let characters = 0
  let full = false
  for (const issue of issues) {
    characters += issue.pointer.length
    full ||= listed.length === issueLimit || (listed.length > 0 && characters > pointerBudget)
    if (full) omitted++
    else listed.push(issue instanceof Issue ? issue : new Issue({ pointer: issue.pointer, detail: issue.detail }))
  }
  return new InvalidRequest({ reason, issues: listed, omitted })
}

/**
 * What a refusal says of the request it refuses, once known: the file its body named, and the user owning its
 * key once the key was found (the one who asked, not always the file's owner). For the transport's log line; no
 * reply shows it.
 *
 * @since 0.2.0
 * @category models
 */
export interface Subject {
  readonly fileId?: FileId | undefined
  readonly userId?: UserId | undefined
}

const subjectFields = { fileId: Schema.optional(FileId), userId: Schema.optional(UserId) }

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
export class RateLimited extends Failure.withMessage<RateLimited>()(
  "RateLimited",
  { scope: RateLimitScope, limit: Schema.Number, retryAfterMillis: Schema.Number, ...subjectFields },
  (failure) => `Too many requests for this ${failure.scope === "apiKey" ? "API key" : "client address"}`
) {}

/**
 * The API key matches no active key, or its user does not own the file. The two are deliberately alike.
 *
 * @since 0.1.0
 * @category errors
 */
export class AccessDenied extends Failure.withMessage<AccessDenied>()(
  "AccessDenied",
  subjectFields,
  "The API key does not grant access to this file"
) {}

/**
 * The key is valid but no file has the requested id.
 *
 * @since 0.1.0
 * @category errors
 */
export class FileNotFound extends Failure.withMessage<FileNotFound>()(
  "FileNotFound",
  subjectFields,
  "No file has this id"
) {}

/**
 * Storage did not answer; the request may succeed later.
 *
 * @since 0.1.0
 * @category errors
 */
export class StorageUnavailable extends Failure.withMessage<StorageUnavailable>()(
  "StorageUnavailable",
  { cause: Schema.Defect, ...subjectFields },
  "Storage is not available"
) {}

/**
 * The rate limiter's shared store did not answer and the limiter is configured to refuse rather than admit.
 *
 * @since 0.1.0
 * @category errors
 */
export class RateLimiterUnavailable extends Failure.withMessage<RateLimiterUnavailable>()(
  "RateLimiterUnavailable",
  { cause: Schema.Defect, ...subjectFields },
  "Rate limiting is not available"
) {}

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

/**
 * `failure` saying what it refuses (`subject`); a refused body has no subject and is returned as it is.
 *
 * @since 0.2.0
 * @category constructors
 */
export const about = <E extends GetFileDataError>(failure: E, subject: Subject): E => {
  const refused: GetFileDataError = failure
  switch (refused._tag) {
    case "InvalidRequest":
      return failure
    case "RateLimited": {
      const { scope, limit, retryAfterMillis } = refused
      return new RateLimited({ scope, limit, retryAfterMillis, ...subject }) as E
    }
    case "AccessDenied":
      return new AccessDenied(subject) as E
    case "FileNotFound":
      return new FileNotFound(subject) as E
    case "StorageUnavailable":
      return new StorageUnavailable({ cause: refused.cause, ...subject }) as E
    case "RateLimiterUnavailable":
      return new RateLimiterUnavailable({ cause: refused.cause, ...subject }) as E
  }
}
