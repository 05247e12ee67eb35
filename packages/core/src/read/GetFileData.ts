/**
 * The first operation of the service: give the owner of a file its metadata, counters and submissions.
 *
 * The rules it shares with every operation on one file, and their order (docs/api.md#order-of-checks), are
 * `FileRequest`'s; this module adds its request, `{ fileId, apiKey }`, and its answer.
 * The answer reads the submissions up to the read point taken with the file, so a reply written over many
 * pages while a writer appends shows the file's counters and submissions from one moment.
 *
 * Reading changes no counter.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { GetFileDataError, InvalidRequest } from "../shared/FileDataError.js"
import type * as FileRepository from "../shared/FileRepository.js"
import * as FileRequest from "../shared/FileRequest.js"
import type * as Immediate from "../shared/Immediate.js"
import { commonShape } from "../shared/internal/commonShape.js"
import type * as RateLimiter from "../shared/RateLimiter.js"
import * as RequestDecoding from "../shared/RequestDecoding.js"
import * as RequestSchema from "../shared/RequestSchema.js"
import type { FileDataReply } from "./FileDataReply.js"

/**
 * The request body: exactly these two fields, under the text rules (`TextRules`); any other field is refused.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetFileDataRequest = Schema.Struct({
  fileId: RequestSchema.fileIdField(
    "Identifier of the file whose data is requested: at most 256 characters (code points), well-formed Unicode without U+0000"
  ),
  apiKey: RequestSchema.apiKeyField
}).annotations({
  identifier: "GetFileDataRequest",
  parseOptions: { onExcessProperty: "error", errors: "all" }
})

/**
 * @since 0.1.0
 * @category models
 */
export type GetFileDataRequest = typeof GetFileDataRequest.Type

/**
 * What a transport hands to the use case. The body is decoded lazily so a throttled caller costs no parsing.
 *
 * @since 0.1.0
 * @category models
 */
export type GetFileDataInput = FileRequest.Input

const decodeRequest = RequestDecoding.decoder(GetFileDataRequest)

/**
 * Reads a parsed body as a {@link GetFileDataRequest}, listing its problems by JSON Pointer (as many as
 * `FileDataError.invalidRequest` lists, the rest counted).
 *
 * @since 0.1.0
 * @category decoding
 */
export const parseRequest = (body: unknown): Effect.Effect<GetFileDataRequest, InvalidRequest> => {
  const valid = commonShape(body)
  if (valid !== undefined) return Effect.succeed(valid)
  const result = decodeRequest(body)
  return result._tag === "Right"
    ? Effect.succeed(result.right)
    : Effect.fail(RequestDecoding.invalidPayload(result.left.issues, result.left.unlisted))
}

/**
 * The request as a client sends it (plain strings): the encoded side of {@link GetFileDataRequest}, refused
 * exactly when {@link parseRequest} refuses it. The typed client's payload schema.
 *
 * @since 0.2.0
 * @category schemas
 */
export const RequestJson = RequestSchema.wire(GetFileDataRequest, parseRequest)

/**
 * @since 0.3.0
 * @category models
 */
export type RequestJson = typeof RequestJson.Type

/**
 * The ports the operation runs on.
 *
 * @since 0.1.0
 * @category models
 */
export type Ports = FileRequest.Ports

const answer = (
  files: FileRepository.FileRepository,
  _request: GetFileDataRequest,
  file: FileRepository.FoundFile
): FileDataReply => ({ file, files })

const operation = FileRequest.operation(parseRequest, answer)

/**
 * Runs the operation for one request on the given ports: for transports that hold their ports already
 * and would otherwise provide them to every request.
 *
 * @since 0.1.0
 * @category use cases
 */
export const runWith: (ports: Ports, input: GetFileDataInput) => Immediate.Immediate<FileDataReply, GetFileDataError> =
  operation.runWith

/**
 * Runs the operation for one request on the ports of the context.
 *
 * @since 0.1.0
 * @category use cases
 */
export const run: (
  input: GetFileDataInput
) => Effect.Effect<FileDataReply, GetFileDataError, FileRepository.FileRepository | RateLimiter.RateLimiter> =
  operation.run
