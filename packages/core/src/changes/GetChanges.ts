/**
 * The change feed: give the owner of a file its changes in commit order (every submission stored, by an import
 * or an append, and every one erased), after the cursor of an earlier reply (`after`; without it, from the file's
 * first change), at most `limit` of them, with the cursor to continue from (`next`) and whether more were
 * committed (`hasMore`). A consumer that sends each reply's `next` as the next request's `after` sees every
 * change exactly once, a backdated append and an erasure included, where the incremental read (`GetSubmissions`)
 * follows `createdDate` and misses both.
 *
 * The rules, their order and the refusals are `FileRequest`'s, as for `GetSubmissions`; so is the long poll
 * (`wait`): a request whose reply would hold no change waits until `SubmissionSignals` says its file may have
 * changed, its wait ends (the empty page, `next` unchanged), its client goes away or the process stops,
 * counted once against the rate limits. Every page is read up to the read point taken with the file.
 *
 * Reading changes no counter.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { FileId } from "../shared/FileData.js"
import type { GetSubmissionsError, InvalidRequest, Issue, StorageUnavailable } from "../shared/FileDataError.js"
import type * as FileRepository from "../shared/FileRepository.js"
import * as FileRequest from "../shared/FileRequest.js"
import * as Immediate from "../shared/Immediate.js"
import type * as RateLimiter from "../shared/RateLimiter.js"
import * as RequestDecoding from "../shared/RequestDecoding.js"
import * as RequestSchema from "../shared/RequestSchema.js"
import type * as GetSubmissions from "../sync/GetSubmissions.js"
import * as LongPoll from "../sync/internal/longPoll.js"
import * as SubmissionSignals from "../sync/SubmissionSignals.js"
import * as WaitingRequests from "../sync/WaitingRequests.js"
import * as ChangeCursor from "./ChangeCursor.js"
import * as ChangesReply from "./ChangesReply.js"

/**
 * How many changes a reply holds when the request gives no `limit`: the incremental read's rule.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultLimit = RequestSchema.defaultLimit

/**
 * The largest `limit` a request may give.
 *
 * @since 0.3.0
 * @category constants
 */
export const maxLimit = RequestSchema.maxLimit

/**
 * The longest `wait` a request may give, in seconds.
 *
 * @since 0.3.0
 * @category constants
 */
export const maxWait = RequestSchema.maxWait

const CURSOR = "must be the next of an earlier change feed reply for this file"

// What a member of the wrong value is told, by member; fixed texts that never repeat the value.
const details = { after: CURSOR, ...RequestSchema.pagingDetails }

/**
 * The request body: `fileId` and `apiKey` as for `GetFileData`, and the optional `after`, `limit` and `wait`;
 * any other field is refused. That `after` is a feed cursor of `fileId` is checked by {@link parseRequest}.
 *
 * @since 0.3.0
 * @category schemas
 */
export const GetChangesRequest = Schema.Struct({
  fileId: RequestSchema.fileIdField(
    "Identifier of the file whose changes are requested: at most 256 characters (code points), well-formed Unicode without U+0000"
  ),
  apiKey: RequestSchema.apiKeyField,
  after: Schema.optionalWith(
    Schema.String.pipe(Schema.minLength(1)).annotations({
      title: "ChangeCursor",
      description:
        "The next of an earlier change feed reply for the same file (or a webhook event's changesNext): continue after its last change. Opaque; any other text, a cursor of the incremental read included, is refused. Without it the feed starts at the file's first change",
      // Swagger UI's Try it out fills in each field's example (else "string", refused): a cursor of the demo's
      // contact form, after its second change.
      examples: [ChangeCursor.encode(FileId.make("demo-contact-form"), "2")]
    }),
    { exact: true }
  ),
  limit: RequestSchema.limitField("changes", 100),
  wait: RequestSchema.waitField(
    `Seconds, 0 to ${maxWait}, to hold the request when no change follows after yet, until one is committed (answered at once with it) or the time is up (the empty page, next unchanged); default 0`
  )
}).annotations({
  identifier: "GetChangesRequest",
  parseOptions: { onExcessProperty: "error", errors: "all" }
})

/**
 * @since 0.3.0
 * @category models
 */
export type GetChangesRequest = typeof GetChangesRequest.Type

/**
 * A request as the use case reads it: `after` is the feed position its cursor carries.
 *
 * @since 0.3.0
 * @category models
 */
export interface ChangesQuery extends FileRequest.Credentials {
  readonly after: string | undefined
  readonly limit: number
  /** Seconds the request may wait for a change. */
  readonly wait: number
}

/**
 * What a transport hands to the use case: as for the incremental read, with how it tells that its client went
 * away.
 *
 * @since 0.3.0
 * @category models
 */
export type GetChangesInput = GetSubmissions.GetSubmissionsInput

/**
 * The ports the operation runs on: those of the incremental read, whose waits it shares.
 *
 * @since 0.3.0
 * @category models
 */
export type Ports = GetSubmissions.Ports

const decodeRequest = RequestDecoding.decoder(GetChangesRequest, details)

/**
 * Reads a parsed body as a {@link ChangesQuery}, listing every problem by its JSON Pointer: those of
 * {@link GetChangesRequest}, and an `after` that is not a feed cursor of this file.
 *
 * @since 0.3.0
 * @category decoding
 */
export const parseRequest = (body: unknown): Effect.Effect<ChangesQuery, InvalidRequest> => {
  const result = decodeRequest(body)
  const found: Array<Issue> = []
  const position = RequestDecoding.afterCursor(body, ChangeCursor.decode, CURSOR, found)
  // The body has no window, so only the decoder's problems and the cursor's are listed.
  return RequestDecoding.windowed(result, body, found, (request) => ({
    fileId: request.fileId,
    apiKey: request.apiKey,
    after: Option.getOrUndefined(position),
    limit: request.limit,
    wait: request.wait
  }))
}

/**
 * The request as a client sends it (plain strings and numbers): the encoded side of {@link GetChangesRequest},
 * refused exactly when {@link parseRequest} refuses it. The typed client's payload schema.
 *
 * @since 0.3.0
 * @category schemas
 */
export const RequestJson = RequestSchema.wire(GetChangesRequest, parseRequest)

/**
 * @since 0.3.0
 * @category models
 */
export type RequestJson = typeof RequestJson.Type

// A page of the feed after `after`, up to the file's read point: joined where the adapter joins it, else the
// domain's page, which the reply writes in pieces (docs/performance.md#feed-pages-joined-in-storage).
const read = (
  files: FileRepository.FileRepository,
  file: FileRepository.FoundFile,
  after: string | undefined,
  limit: number
): Effect.Effect<ChangesReply.Page, StorageUnavailable> => {
  const range = { after, limit, upTo: file.readPoint }
  const joined = files.encodedPages?.readJoinedChanges
  return joined === undefined ? files.readChanges(file.id, range) : joined(file.id, range)
}

// `first`, when given, is the reply's first page, read already.
const answer = (
  files: FileRepository.FileRepository,
  request: ChangesQuery,
  file: FileRepository.FoundFile,
  first?: ChangesReply.Page
): ChangesReply.ChangesReply => ({
  file,
  limit: request.limit,
  changePage: (after, limit) =>
    first !== undefined && after === undefined
      ? Effect.succeed(first)
      : read(files, file, after ?? request.after, limit)
})

// The wait of one request (`LongPoll.waited`): its first page read as every page of its reply is.
const waited = (
  ports: Ports,
  input: GetChangesInput,
  request: ChangesQuery,
  found: FileRepository.FoundFile
): Effect.Effect<ChangesReply.ChangesReply, GetSubmissionsError> =>
  LongPoll.waited(ports, input, request, found, {
    first: (file) => read(ports.files, file, request.after, Math.min(request.limit, ChangesReply.pageLimit)),
    isEmpty: (page) => ChangesReply.countOf(page) === 0,
    reply: (file, first) => answer(ports.files, request, file, first)
  })

const operation = FileRequest.operation(parseRequest, (files, request: ChangesQuery, file) => ({
  request,
  file,
  reply: answer(files, request, file)
}))

/**
 * Runs the operation for one request on the given ports.
 *
 * @since 0.3.0
 * @category use cases
 */
export const runWith = (
  ports: Ports,
  input: GetChangesInput
): Immediate.Immediate<ChangesReply.ChangesReply, GetSubmissionsError> =>
  Immediate.flatMap(operation.runWith(ports, input), ({ file, reply, request }) =>
    request.wait === 0 ? Immediate.succeed(reply) : waited(ports, input, request, file)
  )

/**
 * Runs the operation for one request on the ports of the context.
 *
 * @since 0.3.0
 * @category use cases
 */
export const run = (
  input: GetChangesInput
): Effect.Effect<
  ChangesReply.ChangesReply,
  GetSubmissionsError,
  FileRepository.FileRepository | RateLimiter.RateLimiter | SubmissionSignals.SubmissionSignals
> =>
  Effect.flatMap(
    Effect.all({
      ports: FileRequest.ports,
      signals: SubmissionSignals.SubmissionSignals,
      waiting: Effect.serviceOption(WaitingRequests.WaitingRequests)
    }),
    ({ ports, signals, waiting }) => runWith({ ...ports, signals, waiting: Option.getOrUndefined(waiting) }, input)
  )
