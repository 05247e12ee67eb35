/**
 * The incremental read: give the owner of a file a run of its submissions in reply order, within a window of
 * `createdDate` (`since <= createdDate < until`), after the cursor of an earlier reply (`after`), at most
 * `limit` of them, with the cursor to continue from (`next`) and whether more matched (`hasMore`). A client that
 * syncs sends each reply's `next` as the next request's `after` and gets what was appended since with a later
 * `createdDate`.
 *
 * The rules it shares with `GetFileData`, and their order (docs/api.md#order-of-checks), are `FileRequest`'s,
 * so both fail alike; this module adds its request and its answer. The answer reads up to the read point
 * taken with the file, so a reply read over several pages shows one moment of the file and `hasMore` says
 * whether more matched at that moment.
 *
 * With `wait` (seconds), a request whose reply would hold no submission waits, holding no connection, until
 * `SubmissionSignals` says its file may have changed (then it reads again, and answers if anything matched), its
 * wait ends (the empty page, `next` unchanged), the transport says its client went away, or the process stops
 * (`WaitingRequests`: the empty page at once). It is counted once against the rate limits, and against
 * `WaitingRequests`' bounds while it waits.
 *
 * Reading changes no counter.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as EncodedPages from "../shared/EncodedPages.js"
import { InstantFromIso } from "../shared/FileData.js"
import type { GetSubmissionsError, InvalidRequest, Issue, StorageUnavailable } from "../shared/FileDataError.js"
import type * as FileRepository from "../shared/FileRepository.js"
import * as FileRequest from "../shared/FileRequest.js"
import * as Immediate from "../shared/Immediate.js"
import type * as RateLimiter from "../shared/RateLimiter.js"
import * as RequestDecoding from "../shared/RequestDecoding.js"
import * as RequestSchema from "../shared/RequestSchema.js"
import * as LongPoll from "./internal/longPoll.js"
import * as SubmissionCursor from "./SubmissionCursor.js"
import * as SubmissionSignals from "./SubmissionSignals.js"
import { pageLimit, type SubmissionsReply } from "./SubmissionsReply.js"
import * as WaitingRequests from "./WaitingRequests.js"

/**
 * How many submissions a reply holds when the request gives no `limit`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultLimit = RequestSchema.defaultLimit

/**
 * The largest `limit` a request may give.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxLimit = RequestSchema.maxLimit

/**
 * The longest `wait` a request may give, in seconds.
 *
 * @since 0.2.0
 * @category constants
 */
export const maxWait = RequestSchema.maxWait

const INSTANT = "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
const CURSOR = "must be the next of an earlier reply for this file"

// What a member of the wrong value is told, by member; fixed texts that never repeat the value.
const details = {
  since: INSTANT,
  until: INSTANT,
  after: CURSOR,
  ...RequestSchema.pagingDetails
}

// An instant as a request gives it: on the wire a date-time text, read into epoch milliseconds.
const instant = (description: string, example: string) =>
  Schema.compose(
    Schema.String.pipe(Schema.minLength(1)).annotations({
      title: "Instant",
      description,
      examples: [example],
      jsonSchema: { format: "date-time" }
    }),
    InstantFromIso
  )

/**
 * The request body: `fileId` and `apiKey` as for `GetFileData`, and the optional bounds; any other field is
 * refused. That `after` belongs to `fileId` and that `until` is not before `since` are checked by
 * {@link parseRequest}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetSubmissionsRequest = Schema.Struct({
  fileId: RequestSchema.fileIdField(
    "Identifier of the file whose submissions are requested: at most 256 characters (code points), well-formed Unicode without U+0000"
  ),
  apiKey: RequestSchema.apiKeyField,
  since: Schema.optionalWith(
    instant(
      "Only submissions with createdDate >= since: an ISO 8601 date-time with a zone",
      "2024-03-01T00:00:00.000Z"
    ),
    { exact: true }
  ),
  until: Schema.optionalWith(
    instant(
      "Only submissions with createdDate < until: an ISO 8601 date-time with a zone, not before since",
      "2024-04-01T00:00:00.000Z"
    ),
    { exact: true }
  ),
  after: Schema.optionalWith(
    Schema.String.pipe(Schema.minLength(1)).annotations({
      title: "Cursor",
      description:
        "The next of an earlier reply for the same file: continue after its last submission. Opaque; any other text is refused",
      // Swagger UI's Try it out fills in each field's example (else "string", refused): the demo's contact form
      // after its first two submissions, in a window that holds them, two at a time, without waiting.
      examples: ["MTFkNmE5NzRlZGJiZWFkMWMxNzA5ODI5NjAzOTgxOjI"]
    }),
    { exact: true }
  ),
  limit: RequestSchema.limitField("submissions", 2),
  wait: RequestSchema.waitField(
    `Seconds, 0 to ${maxWait}, to hold the request when no submission matches yet, until one is appended (answered at once with it) or the time is up (the empty page, next unchanged); default 0`
  )
}).annotations({
  identifier: "GetSubmissionsRequest",
  parseOptions: { onExcessProperty: "error", errors: "all" }
})

/**
 * @since 0.1.0
 * @category models
 */
export type GetSubmissionsRequest = typeof GetSubmissionsRequest.Type

/**
 * A request as the use case reads it: `after` is the position its cursor carries, instants are epoch
 * milliseconds.
 *
 * @since 0.1.0
 * @category models
 */
export interface SubmissionsQuery extends FileRequest.Credentials {
  readonly since: number | undefined
  readonly until: number | undefined
  readonly after: string | undefined
  readonly limit: number
  /** Seconds the request may wait for a matching submission. */
  readonly wait: number
}

/**
 * What a transport hands to the use case. The body is decoded lazily so a throttled caller costs no parsing.
 *
 * @since 0.1.0
 * @category models
 */
export interface GetSubmissionsInput extends FileRequest.Input {
  /**
   * Calls `listener` when the client goes away (at once, if it has), so a wait ends there; returns what
   * removes the listener.
   */
  readonly gone?: ((listener: () => void) => () => void) | undefined
}

/**
 * The ports the operation runs on: those every operation on a file takes, the signals a wait wakes on, and the
 * process's waiting requests (without them, waits are unbounded and end only by themselves).
 *
 * @since 0.1.0
 * @category models
 */
export interface Ports extends FileRequest.Ports {
  readonly signals: SubmissionSignals.SubmissionSignals
  readonly waiting?: WaitingRequests.WaitingRequests | undefined
}

const decodeRequest = RequestDecoding.decoder(GetSubmissionsRequest, details)

/**
 * Reads a parsed body as a {@link SubmissionsQuery}, listing every problem by its JSON Pointer: those of
 * {@link GetSubmissionsRequest}, an `after` that is not a cursor of this file, an `until` before `since`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parseRequest = (body: unknown): Effect.Effect<SubmissionsQuery, InvalidRequest> => {
  const result = decodeRequest(body)
  const found: Array<Issue> = []
  const position = RequestDecoding.afterCursor(body, SubmissionCursor.decode, CURSOR, found)
  return RequestDecoding.windowed(result, body, found, (request) => ({
    fileId: request.fileId,
    apiKey: request.apiKey,
    since: request.since,
    until: request.until,
    after: Option.getOrUndefined(position),
    limit: request.limit,
    wait: request.wait
  }))
}

/**
 * The request as a client sends it (plain strings and numbers): the encoded side of
 * {@link GetSubmissionsRequest}, refused exactly when {@link parseRequest} refuses it. The typed client's
 * payload schema.
 *
 * @since 0.2.0
 * @category schemas
 */
export const RequestJson = RequestSchema.wire(GetSubmissionsRequest, parseRequest)

/**
 * @since 0.3.0
 * @category models
 */
export type RequestJson = typeof RequestJson.Type

// A page of the request's range after `after`, up to the file's read point, each submission with its id first.
const read = (
  files: FileRepository.FileRepository,
  request: SubmissionsQuery,
  file: FileRepository.FoundFile,
  after: string | undefined,
  limit: number
): Effect.Effect<EncodedPages.JoinedPage, StorageUnavailable> =>
  EncodedPages.of(files).readJoined(
    file.id,
    { after, since: request.since, until: request.until, limit, upTo: file.readPoint },
    "withId"
  )

// `first`, when given, is the reply's first page, read already.
const answer = (
  files: FileRepository.FileRepository,
  request: SubmissionsQuery,
  file: FileRepository.FoundFile,
  first?: EncodedPages.JoinedPage
): SubmissionsReply => ({
  file,
  limit: request.limit,
  submissionPage: (after, limit) =>
    first !== undefined && after === undefined
      ? Effect.succeed(first)
      : read(files, request, file, after ?? request.after, limit)
})

// The wait of one request (`LongPoll.waited`): its first page read as every page of its reply is.
const waited = (
  ports: Ports,
  input: GetSubmissionsInput,
  request: SubmissionsQuery,
  found: FileRepository.FoundFile
): Effect.Effect<SubmissionsReply, GetSubmissionsError> =>
  LongPoll.waited(ports, input, request, found, {
    first: (file) => read(ports.files, request, file, request.after, Math.min(request.limit, pageLimit)),
    isEmpty: (page) => page.count === 0,
    reply: (file, first) => answer(ports.files, request, file, first)
  })

const operation = FileRequest.operation(parseRequest, (files, request: SubmissionsQuery, file) => ({
  request,
  file,
  reply: answer(files, request, file)
}))

/**
 * Runs the operation for one request on the given ports: for transports that hold their ports already
 * and would otherwise provide them to every request.
 *
 * @since 0.1.0
 * @category use cases
 */
export const runWith = (
  ports: Ports,
  input: GetSubmissionsInput
): Immediate.Immediate<SubmissionsReply, GetSubmissionsError> =>
  // A request that does not wait stays evaluated at once when its ports answered at once.
  Immediate.flatMap(operation.runWith(ports, input), ({ file, reply, request }) =>
    request.wait === 0 ? Immediate.succeed(reply) : waited(ports, input, request, file)
  )

/**
 * Runs the operation for one request on the ports of the context.
 *
 * @since 0.1.0
 * @category use cases
 */
export const run = (
  input: GetSubmissionsInput
): Effect.Effect<
  SubmissionsReply,
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
