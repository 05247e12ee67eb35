/**
 * The one operation of the service: give the owner of a file its metadata, counters and submissions.
 *
 * Every rule of the specification and the contract that does not depend on a transport lives here, in
 * the order it is applied:
 *
 * 1. the client address is counted against its quota (every request, so floods stay cheap);
 * 2. the body is read and must be exactly `{ fileId, apiKey }`, an id and a non-empty text (`TextRules`);
 * 3. the API key is counted against its quota;
 * 4. the key must match an active key, else `AccessDenied` (before any file is looked up);
 * 5. the file must exist, else `FileNotFound`;
 * 6. the key's user must own the file, else `AccessDenied`.
 *
 * Reading changes no counter.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { ApiKey, ApiKeyText, FileId } from "./FileData.js"
import {
  AccessDenied,
  FileNotFound,
  type GetFileDataError,
  type InvalidRequest,
  Issue,
  invalidRequest,
  issueLimit
} from "./FileDataError.js"
import type { FileDataReply } from "./FileDataReply.js"
import * as FileRepository from "./FileRepository.js"
import * as RateLimiter from "./RateLimiter.js"
import * as TextRules from "./TextRules.js"

/**
 * The request body: exactly these two fields, under the text rules (`TextRules`); any other field is refused.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetFileDataRequest = Schema.Struct({
  fileId: FileId.annotations({
    description:
      "Identifier of the file whose data is requested: at most 256 characters (code points), well-formed Unicode without U+0000"
  }),
  apiKey: ApiKey.annotations({ description: "The caller's API key: well-formed Unicode without U+0000" })
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
export interface GetFileDataInput {
  readonly clientAddress: string
  /** The parsed JSON body, or the transport's reason it has none. */
  readonly body: Effect.Effect<unknown, InvalidRequest>
}

const decodeRequest = Schema.decodeUnknownEither(GetFileDataRequest)

// The request is flat: nothing below its first level can change the verdict, and formatting a refused
// value walks it whole, so a body nested a few thousand levels deep (well inside 64 KiB) would overflow
// the stack. Decoding a copy with every nested value emptied keeps every issue and bounds the work.
// `Object.fromEntries` keeps a `__proto__` key as a key.
const emptied = (value: unknown): unknown =>
  typeof value !== "object" || value === null ? value : Array.isArray(value) ? [] : {}

// Thousands of unknown members (a 64 KiB body holds eight thousand) would each become an issue to format;
// only as many as a refusal lists are decoded, and the rest are counted.
const shallow = (body: unknown): { readonly copy: unknown; readonly unlisted: number } => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { copy: emptied(body), unlisted: 0 }
  const entries: Array<[string, unknown]> = []
  let unknown = 0
  let unlisted = 0
  // `for in` rather than `Object.entries`, which builds a pair for each of thousands of keys.
  for (const key in body) {
    if (!Object.hasOwn(body, key)) continue
    if (key !== "fileId" && key !== "apiKey" && ++unknown > issueLimit) unlisted++
    else entries.push([key, emptied((body as Record<string, unknown>)[key])])
  }
  return { copy: Object.fromEntries(entries), unlisted }
}

// Nearly every request is exactly `{"fileId": "…", "apiKey": "…"}` with strings that obey the text rules:
// that shape is accepted here without the schema's machinery, which costs more than the rest of the decoding. Anything
// else, valid or not, goes through the schema; a property test holds the two to the same verdict.
const commonShape = (body: unknown): GetFileDataRequest | undefined => {
  if (typeof body !== "object" || body === null || Object.getPrototypeOf(body) !== Object.prototype) return undefined
  let fields = 0
  for (const key in body) {
    if (key !== "fileId" && key !== "apiKey") return undefined
    fields++
  }
  const { apiKey, fileId } = body as Record<string, unknown>
  return fields === 2 &&
    typeof fileId === "string" &&
    TextRules.isId(fileId) &&
    typeof apiKey === "string" &&
    TextRules.isNonEmptyText(apiKey)
    ? { fileId: FileId.make(fileId, trusted), apiKey: Redacted.make(ApiKeyText.make(apiKey, trusted)) }
    : undefined
}

// The fields were checked just above; the brands' own validation would only repeat it.
const trusted = { disableValidation: true } as const

const escapePointerToken = (token: PropertyKey): string => String(token).replaceAll("~", "~0").replaceAll("/", "~1")

// The messages are fixed texts: a refused value, which may be a key, is never repeated back. The text rules'
// messages are fixed texts too; anything else a schema says is replaced.
const describe = (issue: ParseResult.ArrayFormatterIssue): string => {
  switch (issue._tag) {
    case "Missing":
      return "is required"
    case "Unexpected":
      return "is not allowed"
    default:
      return issue.path.length === 0
        ? "must be a JSON object"
        : TextRules.isFixedMessage(issue.message)
          ? issue.message
          : "must be a non-empty string"
  }
}

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
  const { copy, unlisted } = shallow(body)
  const result = decodeRequest(copy)
  if (result._tag === "Right") return Effect.succeed(result.right)
  const issues = ParseResult.ArrayFormatter.formatErrorSync(result.left).map(
    (issue) =>
      new Issue({
        pointer: issue.path.map((token) => `/${escapePointerToken(token)}`).join(""),
        detail: describe(issue)
      })
  )
  return Effect.fail(invalidRequest("InvalidPayload", issues, unlisted))
}

/**
 * The ports the operation runs on.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ports {
  readonly files: FileRepository.FileRepository
  readonly limiter: RateLimiter.RateLimiter
}

/**
 * Runs the operation for one request on the given ports: for transports that hold their ports already
 * and would otherwise provide them to every request.
 *
 * @since 0.1.0
 * @category use cases
 */
export const runWith: (ports: Ports, input: GetFileDataInput) => Effect.Effect<FileDataReply, GetFileDataError> =
  // One generator function for every call, not one per call: V8 gives each new generator function its own
  // prototype and hidden class, which costs microseconds and keeps every request's objects alive into the
  // old generation. Measured on the small bench profile: docs/performance.md.
  Effect.fnUntraced(function* ({ files, limiter }: Ports, input: GetFileDataInput) {
    yield* limiter.consume({ scope: "clientAddress", address: input.clientAddress })
    const request = yield* Effect.flatMap(input.body, parseRequest)
    yield* limiter.consume({ scope: "apiKey", apiKey: request.apiKey })

    const owner = yield* files.findKeyOwner(request.apiKey)
    if (Option.isNone(owner)) return yield* new AccessDenied()
    const file = yield* files.findFile(request.fileId)
    if (Option.isNone(file)) return yield* new FileNotFound()
    if (file.value.ownerId !== owner.value) return yield* new AccessDenied()

    const fileId = file.value.id
    const reply: FileDataReply = {
      file: file.value,
      submissionPage: (after) => files.submissionPage(fileId, after)
    }
    return reply
  })

/**
 * Runs the operation for one request on the ports of the context.
 *
 * @since 0.1.0
 * @category use cases
 */
export const run = (
  input: GetFileDataInput
): Effect.Effect<FileDataReply, GetFileDataError, FileRepository.FileRepository | RateLimiter.RateLimiter> =>
  Effect.flatMap(Effect.all({ files: FileRepository.FileRepository, limiter: RateLimiter.RateLimiter }), (ports) =>
    runWith(ports, input)
  )
