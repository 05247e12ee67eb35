/**
 * The export: every submission of a file, or those of a `createdDate` window (`since <= createdDate < until`),
 * for a spreadsheet (CSV) or a pipeline (NDJSON), read page by page up to the read point taken with the file, so
 * an export of any size is written in bounded memory and shows one moment of the file. `ExportEncoder`
 * writes the reply in its format.
 *
 * The rules it shares with `GetFileData` and `GetSubmissions`, and their order (address quota, body, key quota,
 * key, file, owner), are `FileRequest`'s, so all three fail alike; this module adds its request (`format`
 * required) and its answer, and {@link exportFile}, the same answer for operators, who read any file by its id.
 *
 * Reading changes no counter.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as EncodedPages from "../shared/EncodedPages.js"
import type { FileId, StoredFile } from "../shared/FileData.js"
import {
  FileNotFound,
  type GetFileDataError,
  type InvalidRequest,
  type StorageUnavailable
} from "../shared/FileDataError.js"
import type * as FileRepository from "../shared/FileRepository.js"
import * as FileRequest from "../shared/FileRequest.js"
import type * as RateLimiter from "../shared/RateLimiter.js"
import * as RequestDecoding from "../shared/RequestDecoding.js"
import * as RequestSchema from "../shared/RequestSchema.js"
import { GetSubmissionsRequest } from "../sync/GetSubmissions.js"

/**
 * The formats of an export.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Format = Schema.Literal("csv", "ndjson").annotations({
  identifier: "ExportFormat",
  description:
    "csv (RFC 4180, one column per content name) or ndjson (one submission per line: its id, createdDate and content)"
})

/**
 * @since 0.2.0
 * @category models
 */
export type Format = typeof Format.Type

const INSTANT = "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"

// What a member of the wrong value is told, by member; fixed texts that never repeat the value.
const details = {
  format: 'must be "csv" or "ndjson"',
  since: INSTANT,
  until: INSTANT
}

/**
 * The request body: `fileId` and `apiKey` as for `GetFileData`, the `format`, and the optional window of the
 * incremental read; any other field is refused.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ExportRequest = Schema.Struct({
  fileId: RequestSchema.fileIdField(
    "Identifier of the file to export: at most 256 characters (code points), well-formed Unicode without U+0000"
  ),
  apiKey: RequestSchema.apiKeyField,
  format: Format,
  since: GetSubmissionsRequest.fields.since,
  until: GetSubmissionsRequest.fields.until
}).annotations({
  identifier: "ExportRequest",
  parseOptions: { onExcessProperty: "error", errors: "all" }
})

/**
 * @since 0.2.0
 * @category models
 */
export type ExportRequest = typeof ExportRequest.Type

/**
 * What an export reads, whoever asks: the file, the format and the window, instants in epoch milliseconds.
 *
 * @since 0.2.0
 * @category models
 */
export interface ExportQuery {
  readonly fileId: FileId
  readonly format: Format
  readonly since: number | undefined
  readonly until: number | undefined
}

/**
 * A request as the use case reads it.
 *
 * @since 0.2.0
 * @category models
 */
export interface ExportRequestQuery extends ExportQuery, FileRequest.Credentials {}

/**
 * A successful answer: the file, the format, the file's content names as they stood at its read point (the CSV
 * header), and a reader of the window's submissions page by page in reply order, up to that read point.
 *
 * @since 0.2.0
 * @category models
 */
export interface ExportReply {
  readonly file: StoredFile
  readonly format: Format
  readonly contentNames: Effect.Effect<ReadonlyArray<string>, StorageUnavailable>
  /**
   * The page after `after` (`undefined`: the first), each submission rendered as `rows` says; `next` is given
   * whenever `hasMore`.
   */
  readonly submissionPage: (
    after: string | undefined,
    rows: EncodedPages.ExportRows
  ) => Effect.Effect<EncodedPages.JoinedPage, StorageUnavailable>
}

const decodeRequest = RequestDecoding.decoder(ExportRequest, details)

/**
 * Reads a parsed body as an {@link ExportRequestQuery}, listing every problem by its JSON Pointer: those of
 * {@link ExportRequest} and an `until` before `since`.
 *
 * @since 0.2.0
 * @category decoding
 */
export const parseRequest = (body: unknown): Effect.Effect<ExportRequestQuery, InvalidRequest> =>
  RequestDecoding.windowed(decodeRequest(body), body, [], (request) => ({
    fileId: request.fileId,
    apiKey: request.apiKey,
    format: request.format,
    since: request.since,
    until: request.until
  }))

/**
 * The request as a client sends it (plain strings): the encoded side of {@link ExportRequest}, refused exactly
 * when {@link parseRequest} refuses it. The typed client's payload schema.
 *
 * @since 0.2.0
 * @category schemas
 */
export const RequestJson = RequestSchema.wire(ExportRequest, parseRequest)

/**
 * @since 0.3.0
 * @category models
 */
export type RequestJson = typeof RequestJson.Type

/**
 * The answer for a file as found, with its read point: every read of the reply stops there.
 *
 * @since 0.2.0
 * @category constructors
 */
export const answer = (
  files: FileRepository.FileRepository,
  query: ExportQuery,
  file: FileRepository.FoundFile
): ExportReply => ({
  file,
  format: query.format,
  contentNames: files.readContentNames(file.id, file.readPoint),
  submissionPage: (after, rows) => {
    // Nothing is read past the window's end, so its position need not be looked up.
    const range = { after, since: query.since, until: query.until, upTo: file.readPoint, endPosition: false }
    return EncodedPages.of(files).readExportRows(file.id, range, rows)
  }
})

const operation = FileRequest.operation(parseRequest, answer)

/**
 * The ports the operation runs on.
 *
 * @since 0.2.0
 * @category models
 */
export type Ports = FileRequest.Ports

/**
 * Runs the operation for one request on the given ports.
 *
 * @since 0.2.0
 * @category use cases
 */
export const runWith: (ports: Ports, input: FileRequest.Input) => Effect.Effect<ExportReply, GetFileDataError> =
  operation.runWith

/**
 * Runs the operation for one request on the ports of the context.
 *
 * @since 0.2.0
 * @category use cases
 */
export const run: (
  input: FileRequest.Input
) => Effect.Effect<ExportReply, GetFileDataError, FileRepository.FileRepository | RateLimiter.RateLimiter> =
  operation.run

/**
 * The export of any file by its id, for operators (the CLI), who hold storage and need no key.
 *
 * @since 0.2.0
 * @category use cases
 */
export const exportFile = (
  files: FileRepository.FileRepository,
  query: ExportQuery
): Effect.Effect<ExportReply, FileNotFound | StorageUnavailable> =>
  Effect.flatMap(files.findFile(query.fileId), (file) =>
    Option.isNone(file) ? Effect.fail(new FileNotFound()) : Effect.succeed(answer(files, query, file.value))
  )
