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
  | "rate_limiter_unavailable"
  | "internal_error"

const problemFields = <const Code extends ProblemCode>(status: number, codes: ReadonlyArray<Code>) => ({
  type: Schema.String,
  title: Schema.String,
  status: Schema.Literal(status),
  detail: Schema.String,
  code: Schema.Literal(...(codes as [Code, ...Array<Code>]))
})

const asProblem =
  (status: number) =>
  <S extends Schema.Schema.Any>(schema: S): S =>
    schema.pipe(
      HttpApiSchema.withEncoding({ kind: "Json", contentType: "application/problem+json" }),
      Schema.annotations(HttpApiSchema.annotations({ status }))
    ) as S

/**
 * The request was refused before any lookup; `errors` locates each problem by JSON Pointer, up to
 * `FileDataError.issueLimit` of them, and `omitted` counts the rest.
 *
 * @since 0.1.0
 * @category problems
 */
export const ValidationProblem = Schema.Struct({
  ...problemFields(422, ["validation_failed", "unsupported_media_type", "payload_too_large"]),
  errors: Schema.Array(FileDataError.Issue).pipe(Schema.maxItems(FileDataError.issueLimit)),
  omitted: Schema.optionalWith(
    Schema.Int.pipe(Schema.positive()).annotations({
      description: "How many problems were found beyond those in errors; absent when errors lists them all"
    }),
    { exact: true }
  )
})
  .annotations({ identifier: "ValidationProblem", description: "RFC 9457 problem details" })
  .pipe(asProblem(422))

/**
 * Too many requests for the key or the client address; the `Retry-After` header says when to retry.
 *
 * @since 0.1.0
 * @category problems
 */
export const RateLimitedProblem = Schema.Struct({
  ...problemFields(422, ["rate_limited"]),
  retryAfter: Schema.Int
})
  .annotations({ identifier: "RateLimitedProblem", description: "RFC 9457 problem details" })
  .pipe(asProblem(422))

/**
 * 403: the key matches no active key, or its user does not own the file.
 *
 * @since 0.1.0
 * @category problems
 */
export const AccessDeniedProblem = Schema.Struct(problemFields(403, ["access_denied"]))
  .annotations({ identifier: "AccessDeniedProblem", description: "RFC 9457 problem details" })
  .pipe(asProblem(403))

/**
 * 404: the key is valid but no file has this id.
 *
 * @since 0.1.0
 * @category problems
 */
export const FileNotFoundProblem = Schema.Struct(problemFields(404, ["file_not_found"]))
  .annotations({ identifier: "FileNotFoundProblem", description: "RFC 9457 problem details" })
  .pipe(asProblem(404))

/**
 * 503: storage, or a rate limiter configured to fail closed, does not answer; retry later.
 *
 * @since 0.1.0
 * @category problems
 */
export const UnavailableProblem = Schema.Struct(problemFields(503, ["storage_unavailable", "rate_limiter_unavailable"]))
  .annotations({ identifier: "UnavailableProblem", description: "RFC 9457 problem details" })
  .pipe(asProblem(503))

/**
 * The `/health` answer while storage answers.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Health = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "Health" })

/**
 * Where the operation lives.
 *
 * @since 0.1.0
 * @category constants
 */
export const fileDataPath = "/api/v1/file-data"

/**
 * The file-data operation.
 *
 * @since 0.1.0
 * @category groups
 */
export class FilesGroup extends HttpApiGroup.make("files").add(
  HttpApiEndpoint.post("getFileData", fileDataPath)
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

type Responses = Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>

// HttpApi has no way to declare response headers; these are sent on every reply of the file-data operation.
const rateLimitHeaders = {
  "RateLimit-Policy": {
    description:
      'The quotas enforced (draft-ietf-httpapi-ratelimit-headers), e.g. `"api-key";q=60;w=60, "client-address";q=600;w=60`',
    schema: { type: "string" }
  },
  RateLimit: {
    description:
      'Requests remaining (r) and seconds until the quota is whole again (t) in each quota this request counted against, e.g. `"client-address";r=599;t=60, "api-key";r=59;t=60`',
    schema: { type: "string" }
  }
}

// HttpApi documents a 400 (and its schemas) for its own payload decoding on every operation; this service
// decodes payloads in the core and answers 422 instead, so the 400 would be a lie. And where two errors
// share a status (the two 422s) it falls back to `application/json`; every error reply is a problem document.
const fixedForThisService = (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths = (spec.paths ?? {}) as Record<string, Record<string, { responses?: Responses }>>
  for (const [path, item] of Object.entries(paths)) {
    for (const operation of Object.values(item)) {
      const responses = operation.responses ?? {}
      delete responses["400"]
      for (const [status, response] of Object.entries(responses)) {
        if (path === fileDataPath) response.headers = { ...response.headers, ...rateLimitHeaders }
        const json = response.content?.["application/json"]
        if (Number(status) >= 400 && json !== undefined && response.content !== undefined) {
          response.content = { "application/problem+json": json }
        }
      }
    }
  }
  const schemas = (spec.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {}
  delete schemas.HttpApiDecodeError
  delete schemas.Issue
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
  .annotate(OpenApi.Transform, fixedForThisService)
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Returns a form file's metadata, counters and every submission it received, to the file's owner."
  ) {}
