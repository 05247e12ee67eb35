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
 * Reading changes no counter.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { FileId, InstantFromIso } from "./FileData.js"
import { type GetSubmissionsError, type InvalidRequest, Issue, pointer } from "./FileDataError.js"
import type * as FileRepository from "./FileRepository.js"
import * as FileRequest from "./FileRequest.js"
import type * as RateLimiter from "./RateLimiter.js"
import * as SubmissionCursor from "./SubmissionCursor.js"
import type { SubmissionsReply } from "./SubmissionsReply.js"
import * as TextRules from "./TextRules.js"

/**
 * How many submissions a reply holds when the request gives no `limit`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultLimit = 1000

/**
 * The largest `limit` a request may give.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxLimit = 10_000

const INSTANT = "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
const CURSOR = "must be the next of an earlier reply for this file"

// What a member of the wrong value is told, by member; fixed texts that never repeat the value.
const details = {
  since: INSTANT,
  until: INSTANT,
  after: CURSOR,
  limit: `must be an integer from 1 to ${maxLimit}`
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
  fileId: FileRequest.fileIdField(
    "Identifier of the file whose submissions are requested: at most 256 characters (code points), well-formed Unicode without U+0000"
  ),
  apiKey: FileRequest.apiKeyField,
  since: Schema.optionalWith(
    instant(
      "Only submissions with createdDate >= since: an ISO 8601 date-time with a zone",
      "2024-01-02T00:00:00.000Z"
    ),
    { exact: true }
  ),
  until: Schema.optionalWith(
    instant(
      "Only submissions with createdDate < until: an ISO 8601 date-time with a zone, not before since",
      "2024-02-01T00:00:00.000Z"
    ),
    { exact: true }
  ),
  after: Schema.optionalWith(
    Schema.String.pipe(Schema.minLength(1)).annotations({
      title: "Cursor",
      description:
        "The next of an earlier reply for the same file: continue after its last submission. Opaque; any other text is refused"
    }),
    { exact: true }
  ),
  limit: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1, maxLimit)).annotations({
      title: "Limit",
      description: `At most this many submissions, 1 to ${maxLimit}; default ${defaultLimit}`
    }),
    { exact: true, default: () => defaultLimit }
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
}

/**
 * What a transport hands to the use case. The body is decoded lazily so a throttled caller costs no parsing.
 *
 * @since 0.1.0
 * @category models
 */
export type GetSubmissionsInput = FileRequest.Input

/**
 * The ports the operation runs on.
 *
 * @since 0.1.0
 * @category models
 */
export type Ports = FileRequest.Ports

const decodeRequest = FileRequest.decoder(GetSubmissionsRequest, details)
const decodeInstant = Schema.decodeUnknownOption(InstantFromIso)

/**
 * Reads a parsed body as a {@link SubmissionsQuery}, listing every problem by its JSON Pointer: those of
 * {@link GetSubmissionsRequest}, an `after` that is not a cursor of this file, an `until` before `since`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parseRequest = (body: unknown): Effect.Effect<SubmissionsQuery, InvalidRequest> => {
  const result = decodeRequest(body)
  const issues = result._tag === "Left" ? [...result.left.issues] : []
  // The members that relate to each other are read from the body as given, so their problems are listed
  // even when another member is wrong.
  const member = (name: string): unknown =>
    typeof body === "object" && body !== null && Object.hasOwn(body, name)
      ? (body as Record<string, unknown>)[name]
      : undefined
  const fileId = member("fileId")
  const after = member("after")
  let position = Option.none<string>()
  // An id against the text rules is refused already; its cursor cannot be told apart.
  if (typeof fileId === "string" && TextRules.isId(fileId) && typeof after === "string" && after !== "") {
    position = SubmissionCursor.decode(FileId.make(fileId), after)
    if (Option.isNone(position)) issues.push(new Issue({ pointer: pointer("after"), detail: CURSOR }))
  }
  const since = decodeInstant(member("since"))
  const until = decodeInstant(member("until"))
  if (Option.isSome(since) && Option.isSome(until) && until.value < since.value) {
    issues.push(new Issue({ pointer: pointer("until"), detail: "must not be before since" }))
  }
  if (result._tag === "Left" || issues.length > 0) {
    return Effect.fail(FileRequest.invalidPayload(issues, result._tag === "Left" ? result.left.unlisted : 0))
  }
  const request = result.right
  return Effect.succeed({
    fileId: request.fileId,
    apiKey: request.apiKey,
    since: request.since,
    until: request.until,
    after: Option.getOrUndefined(position),
    limit: request.limit
  })
}

/**
 * The request as a client sends it (plain strings and numbers): the encoded side of
 * {@link GetSubmissionsRequest}, refused exactly when {@link parseRequest} refuses it. The typed client's
 * payload schema.
 *
 * @since 0.2.0
 * @category schemas
 */
export const RequestJson = FileRequest.wire(GetSubmissionsRequest, parseRequest)

// Every page is read up to the file's read point.
const answer = (
  files: FileRepository.FileRepository,
  request: SubmissionsQuery,
  file: FileRepository.FoundFile
): SubmissionsReply => ({
  file,
  limit: request.limit,
  submissionPage: (after, limit) =>
    files.readSubmissions(file.id, {
      after: after ?? request.after,
      since: request.since,
      until: request.until,
      limit,
      upTo: file.readPoint
    })
})

const operation = FileRequest.operation(parseRequest, answer)

/**
 * Runs the operation for one request on the given ports: for transports that hold their ports already
 * and would otherwise provide them to every request.
 *
 * @since 0.1.0
 * @category use cases
 */
export const runWith: (
  ports: Ports,
  input: GetSubmissionsInput
) => Effect.Effect<SubmissionsReply, GetSubmissionsError> = operation.runWith

/**
 * Runs the operation for one request on the ports of the context.
 *
 * @since 0.1.0
 * @category use cases
 */
export const run: (
  input: GetSubmissionsInput
) => Effect.Effect<SubmissionsReply, GetSubmissionsError, FileRepository.FileRepository | RateLimiter.RateLimiter> =
  operation.run
