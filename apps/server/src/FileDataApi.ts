/**
 * The HTTP contract as an `HttpApi`: the single source of routing, the OpenAPI document and typed clients.
 *
 * @since 0.1.0
 */

import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { FileData, FileDataError, GetFileData } from "@filedata/core"
import * as Schema from "effect/Schema"

/**
 * The machine-readable `code` of every problem the service answers with.
 *
 * @since 0.1.0
 * @category models
 */
export type ProblemCode =
  | "validation_failed"
  | "unsupported_media_type"
  | "payload_too_large"
  | "rate_limited"
  | "access_denied"
  | "file_not_found"
  | "not_found"
  | "method_not_allowed"
  | "storage_unavailable"
  | "internal_error"

const problem = <const Code extends ProblemCode, Fields extends Schema.Struct.Fields>(
  identifier: string,
  status: number,
  codes: ReadonlyArray<Code>,
  fields: Fields
) =>
  Schema.Struct({
    type: Schema.String,
    title: Schema.String,
    status: Schema.Literal(status),
    detail: Schema.String,
    code: Schema.Literal(...(codes as [Code, ...Array<Code>])),
    ...fields
  }).pipe(
    Schema.annotations({ identifier, description: "RFC 9457 problem details" }),
    HttpApiSchema.withEncoding({ kind: "Json", contentType: "application/problem+json" }),
    Schema.annotations(HttpApiSchema.annotations({ status }))
  )

/**
 * 422: the request was refused before any lookup; `errors` locates each problem by JSON Pointer.
 *
 * @since 0.1.0
 * @category problems
 */
export const ValidationProblem = problem(
  "ValidationProblem",
  422,
  ["validation_failed", "unsupported_media_type", "payload_too_large"],
  { errors: Schema.Array(FileDataError.Issue) }
)

/**
 * 422: too many requests for the key or the client address; the `Retry-After` header says when to retry.
 *
 * @since 0.1.0
 * @category problems
 */
export const RateLimitedProblem = problem("RateLimitedProblem", 422, ["rate_limited"], { retryAfter: Schema.Int })

/**
 * 403: the key matches no active key, or its user does not own the file.
 *
 * @since 0.1.0
 * @category problems
 */
export const AccessDeniedProblem = problem("AccessDeniedProblem", 403, ["access_denied"], {})

/**
 * 404: the key is valid but no file has this id.
 *
 * @since 0.1.0
 * @category problems
 */
export const FileNotFoundProblem = problem("FileNotFoundProblem", 404, ["file_not_found"], {})

/**
 * 503: storage does not answer; retry later.
 *
 * @since 0.1.0
 * @category problems
 */
export const UnavailableProblem = problem("UnavailableProblem", 503, ["storage_unavailable"], {})

/**
 * The `/health` answer while storage answers.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Health = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "Health" })

/**
 * The file-data operation.
 *
 * @since 0.1.0
 * @category groups
 */
export class FilesGroup extends HttpApiGroup.make("files").add(
  HttpApiEndpoint.post("getFileData", "/api/v1/file-data")
    .setPayload(GetFileData.GetFileDataRequest)
    .addSuccess(FileData.FileData)
    .addError(ValidationProblem)
    .addError(RateLimitedProblem)
    .addError(AccessDeniedProblem)
    .addError(FileNotFoundProblem)
    .addError(UnavailableProblem)
    .annotate(OpenApi.Summary, "Get a file's metadata, counters and every submission")
    .annotate(
      OpenApi.Description,
      "The API key's user must own the file. Submissions are in ascending createdDate, ties in insertion order."
    )
) {}

/**
 * Liveness with a storage check, for load balancers.
 *
 * @since 0.1.0
 * @category groups
 */
export class SystemGroup extends HttpApiGroup.make("system").add(
  HttpApiEndpoint.get("health", "/health")
    .addSuccess(Health)
    .addError(UnavailableProblem)
    .annotate(OpenApi.Summary, "200 while the database answers, 503 otherwise")
) {}

// HttpApi documents a 400 for its own payload decoding on every operation; this service decodes payloads
// in the core and answers 422 instead, so the 400 would be a lie.
const withoutDecodeErrors = (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths = (spec.paths ?? {}) as Record<string, Record<string, { responses?: Record<string, unknown> }>>
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) delete operation.responses?.["400"]
  }
  return spec
}

/**
 * The whole API.
 *
 * @since 0.1.0
 * @category api
 */
export class FileDataApi extends HttpApi.make("filedata")
  .add(FilesGroup)
  .add(SystemGroup)
  .annotate(OpenApi.Title, "filedata")
  .annotate(OpenApi.Transform, withoutDecodeErrors)
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Returns a form file's metadata, counters and every submission it received, to the file's owner."
  ) {}
