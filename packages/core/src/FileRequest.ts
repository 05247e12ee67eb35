/**
 * What the operations on one file share, so each rule exists once: the input a transport hands them, the
 * strict reading of a request body, and the checks that decide whether the caller may read the file
 * ({@link handle}), in the order docs/api.md#order-of-checks states, the one statement of it. Reading
 * changes no counter.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { type ApiKey, ApiKeyText, FileId, InstantFromIso } from "./FileData.js"
import {
  AccessDenied,
  about,
  FileNotFound,
  type GetFileDataError,
  type InvalidRequest,
  Issue,
  invalidRequest,
  issueLimit,
  pointer,
  type RateLimited,
  type RateLimiterUnavailable,
  type StorageUnavailable
} from "./FileDataError.js"
import * as FileRepository from "./FileRepository.js"
import * as Immediate from "./Immediate.js"
import * as RateLimiter from "./RateLimiter.js"
import * as TextRules from "./TextRules.js"

/**
 * What a transport hands to an operation. The body is decoded lazily so a throttled caller costs no parsing.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly clientAddress: string
  /**
   * The parsed JSON body, or the transport's reason it has none; given as a function, it is called at most once:
   * once the address was counted, or first with a limiter that counts a request in one step ({@link admit}).
   */
  readonly body: Effect.Effect<unknown, InvalidRequest> | (() => Effect.Effect<unknown, InvalidRequest>)
}

/**
 * The ports the operations run on.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ports {
  readonly files: FileRepository.FileRepository
  readonly limiter: RateLimiter.RateLimiter
}

/**
 * The ports of the context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const ports: Effect.Effect<Ports, never, FileRepository.FileRepository | RateLimiter.RateLimiter> = Effect.all({
  files: FileRepository.FileRepository,
  limiter: RateLimiter.RateLimiter
})

/**
 * What every request names: the file, and the key that should open it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Credentials {
  readonly fileId: FileId
  readonly apiKey: ApiKey
}

// The requests are flat: nothing below their first level can change the verdict, and formatting a refused
// value walks it whole, so a body nested a few thousand levels deep (well inside 64 KiB) would overflow
// the stack. Decoding a copy with every nested value emptied keeps every issue and bounds the work.
// `Object.fromEntries` keeps a `__proto__` key as a key.
const emptied = (value: unknown): unknown =>
  typeof value !== "object" || value === null ? value : Array.isArray(value) ? [] : {}

// Thousands of unknown members (a 64 KiB body holds eight thousand) would each become an issue to format;
// only as many as a refusal lists are decoded, and the rest are counted.
const shallow = (
  body: unknown,
  known: ReadonlySet<PropertyKey>
): { readonly copy: unknown; readonly unlisted: number } => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { copy: emptied(body), unlisted: 0 }
  const entries: Array<[string, unknown]> = []
  let unknown = 0
  let unlisted = 0
  // `for in` rather than `Object.entries`, which builds a pair for each of thousands of keys.
  for (const key in body) {
    if (!Object.hasOwn(body, key)) continue
    if (!known.has(key) && ++unknown > issueLimit) unlisted++
    else entries.push([key, emptied((body as Record<string, unknown>)[key])])
  }
  return { copy: Object.fromEntries(entries), unlisted }
}

/**
 * The `fileId` member of a request: an id (`FileData.FileId`), described by `description` in the API's
 * document.
 *
 * @since 0.2.0
 * @category schemas
 */
export const fileIdField = (description: string) =>
  FileId.annotations({ title: "File id", description, examples: [FileId.make("demo-contact-form")] })

/**
 * The `apiKey` member of a request: a non-empty text, decoded into `Redacted` (`FileData.ApiKey`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const apiKeyField = Schema.Redacted(
  ApiKeyText.annotations({
    title: "API key",
    description:
      "The caller's API key (`pnpm filedata demo` prints one); it travels only in this body. Well-formed Unicode " +
      "without U+0000",
    examples: [ApiKeyText.make("fdk_...")]
  })
)

/**
 * A request as a client sends it: the encoded side of `schema` (plain strings and numbers, its checks and
 * annotations kept for the API's document), refused exactly when `parse`, the operation's own reading (which
 * is synchronous), refuses it, with the refusal's message.
 *
 * @since 0.2.0
 * @category schemas
 */
export const wire = <A, I, R extends Credentials>(
  schema: Schema.Schema<A, I>,
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>
): Schema.Schema<I> =>
  Schema.encodedBoundSchema(schema).pipe(
    Schema.filter((body) => {
      const exit = Effect.runSyncExit(parse(body))
      return (
        Exit.isSuccess(exit) ||
        Cause.failureOption(exit.cause).pipe(
          Option.match({
            onNone: () => "cannot be read",
            onSome: (refusal) => refusal.message
          })
        )
      )
    }),
    (wired) =>
      wired.annotations({
        ...Option.match(SchemaAST.getIdentifierAnnotation(schema.ast), {
          onNone: () => ({}),
          onSome: (identifier) => ({ identifier })
        }),
        parseOptions: { onExcessProperty: "error" }
      })
  )

/**
 * The member `name` of a body as given, before any decoding; `undefined` when it has none. Members that relate
 * to each other are read this way, so their problems are listed even when another member is wrong.
 *
 * @since 0.2.0
 * @category decoding
 */
export const member = (body: unknown, name: string): unknown =>
  typeof body === "object" && body !== null && Object.hasOwn(body, name)
    ? (body as Record<string, unknown>)[name]
    : undefined

const decodeInstant = Schema.decodeUnknownOption(InstantFromIso)

/**
 * The problem of a window whose `until` is before its `since`, both read from the body as given; `undefined`
 * when there is none.
 *
 * @since 0.2.0
 * @category decoding
 */
export const windowIssue = (body: unknown): Issue | undefined => {
  const since = decodeInstant(member(body, "since"))
  const until = decodeInstant(member(body, "until"))
  return Option.isSome(since) && Option.isSome(until) && until.value < since.value
    ? new Issue({ pointer: pointer("until"), detail: "must not be before since" })
    : undefined
}

/**
 * Refuses a body for `issues`, listing as many as a refusal lists and counting the rest with `unlisted`, the
 * problems found but never made into issues.
 *
 * @since 0.1.0
 * @category decoding
 */
export const invalidPayload = (issues: ReadonlyArray<Issue>, unlisted = 0): InvalidRequest =>
  invalidRequest("InvalidPayload", issues, unlisted)

/**
 * The request a body with a window (`since`, `until`) asks for, `project`ed; or the refusal listing the
 * decoder's problems, those the caller `found`, and an `until` before `since`, in that order.
 *
 * @since 0.2.0
 * @category decoding
 */
export const windowed = <A, B>(
  result: Either.Either<A, Refusal>,
  body: unknown,
  found: ReadonlyArray<Issue>,
  project: (request: A) => B
): Effect.Effect<B, InvalidRequest> => {
  const issues = result._tag === "Left" ? [...result.left.issues, ...found] : [...found]
  const window = windowIssue(body)
  if (window !== undefined) issues.push(window)
  if (result._tag === "Left" || issues.length > 0) {
    return Effect.fail(invalidPayload(issues, result._tag === "Left" ? result.left.unlisted : 0))
  }
  return Effect.succeed(project(result.right))
}

/**
 * Why a {@link decoder} refused a body: its issues, and how many unknown members past
 * `FileDataError.issueLimit` it counted without decoding.
 *
 * @since 0.1.0
 * @category models
 */
export interface Refusal {
  readonly issues: ReadonlyArray<Issue>
  readonly unlisted: number
}

/**
 * A decoder of bodies by a strict request schema, listing its problems by JSON Pointer. The messages are fixed
 * texts, never a refused value (which may be a key): a missing or unknown member, a body that is not an
 * object, and for a member of the wrong value `details[member]`, else the text rules' own words
 * (`TextRules.messages`), else "must be a non-empty string".
 *
 * @since 0.1.0
 * @category decoding
 */
export const decoder = <A, I>(
  schema: Schema.Schema<A, I>,
  details: Readonly<Record<string, string>> = {}
): ((body: unknown) => Either.Either<A, Refusal>) => {
  const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "error", errors: "all" })
  const known = new Set(SchemaAST.getPropertySignatures(Schema.encodedSchema(schema).ast).map(({ name }) => name))
  const describe = (issue: ParseResult.ArrayFormatterIssue): string => {
    switch (issue._tag) {
      case "Missing":
        return "is required"
      case "Unexpected":
        return "is not allowed"
      default: {
        if (issue.path.length === 0) return "must be a JSON object"
        const field = String(issue.path[0])
        if (Object.hasOwn(details, field)) return details[field] as string
        return TextRules.isFixedMessage(issue.message) ? issue.message : "must be a non-empty string"
      }
    }
  }
  return (body) => {
    const { copy, unlisted } = shallow(body, known)
    return Either.mapLeft(decode(copy), (error) => {
      // A member may fail more than one way with the same text; it is told once.
      const issues = new Map<string, Issue>()
      for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
        const at = pointer(...issue.path)
        const detail = describe(issue)
        issues.set(JSON.stringify([at, detail]), new Issue({ pointer: at, detail }))
      }
      return { issues: [...issues.values()], unlisted }
    })
  }
}

/**
 * Rules 1 to 3: counts the client address, reads the body with `parse`, runs `parsed` on the request (what the
 * request's log line says of it), counts the key. A limiter with `consumeRequest` counts both in one step after
 * the body was read, with the same verdicts: an address over its quota is refused whatever its body, and a body
 * refused counts only the address. Like {@link handle}, it starts when called (`Immediate.fn`).
 *
 * @since 0.2.0
 * @category use cases
 */
export const admit: <R extends { readonly apiKey: ApiKey }>(
  limiter: RateLimiter.RateLimiter,
  input: Input,
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
  parsed: (request: R) => Effect.Effect<void>
) => Effect.Effect<R, InvalidRequest | RateLimited | RateLimiterUnavailable> = Immediate.fn(function* <
  R extends { readonly apiKey: ApiKey }
>(
  limiter: RateLimiter.RateLimiter,
  input: Input,
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
  parsed: (request: R) => Effect.Effect<void>
) {
  const address = input.clientAddress
  const body = () => (typeof input.body === "function" ? input.body() : input.body)
  if (limiter.consumeRequest === undefined) {
    yield* limiter.consume({ scope: "clientAddress", address })
    const request = yield* parse(yield* body())
    yield* parsed(request)
    yield* limiter.consume({ scope: "apiKey", apiKey: request.apiKey })
    return request
  }
  const read = yield* Immediate.either(Immediate.flatMap(body(), parse))
  if (Either.isLeft(read)) {
    yield* limiter.consume({ scope: "clientAddress", address })
    return yield* Effect.fail(read.left)
  }
  const counted = yield* limiter.consumeRequest(address, read.right.apiKey)
  if (Either.isLeft(counted.clientAddress)) return yield* Effect.fail(counted.clientAddress.left)
  yield* parsed(read.right)
  if (counted.apiKey === undefined) return yield* Effect.dieMessage("consumeRequest counted the address only")
  if (Either.isLeft(counted.apiKey)) return yield* Effect.fail(counted.apiKey.left)
  return read.right
})

/**
 * Runs an operation on one file for one request: the checks above, then `answer` with the request and the
 * file as found (its read point included).
 *
 * @since 0.1.0
 * @category use cases
 */
export const handle: <R extends Credentials, A>(
  ports: Ports,
  input: Input,
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
  answer: (files: FileRepository.FileRepository, request: R, file: FileRepository.FoundFile) => A
) => Effect.Effect<A, GetFileDataError> =
  // Stepped at once while the ports answer at once (`Immediate`); one generator function for every call.
  Immediate.fn(function* <R extends Credentials, A>(
    { files, limiter }: Ports,
    input: Input,
    parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
    answer: (files: FileRepository.FileRepository, request: R, file: FileRepository.FoundFile) => A
  ) {
    // Once the body named a file, every refusal names it, and the key's user once found (`FileDataError.about`).
    let fileId: FileId | undefined
    const admitted = yield* Immediate.either(
      admit(limiter, input, parse, (request) => {
        fileId = request.fileId
        return Exit.void
      })
    )
    if (Either.isLeft(admitted)) {
      return yield* Effect.fail(fileId === undefined ? admitted.left : about(admitted.left, { fileId }))
    }
    const request = admitted.right
    const access = yield* Immediate.either(files.findAccess(request.apiKey, request.fileId))
    if (Either.isLeft(access)) return yield* Effect.fail(about(access.left, { fileId: request.fileId }))
    const { owner, file } = access.right
    if (Option.isNone(owner)) return yield* new AccessDenied({ fileId: request.fileId })
    if (Option.isNone(file)) return yield* new FileNotFound({ fileId: request.fileId, userId: owner.value })
    if (file.value.ownerId !== owner.value) {
      return yield* new AccessDenied({ fileId: request.fileId, userId: owner.value })
    }
    return answer(files, request, file.value)
  })

/**
 * Rules 4 to 6 applied to a fresh `findAccess`, with no quota counted again: for a request that read its file
 * once already and reads it again (a wait that woke up), so a key revoked meanwhile reads no more.
 *
 * @since 0.2.0
 * @category use cases
 */
export const reopen = (
  files: FileRepository.FileRepository,
  request: Credentials
): Effect.Effect<FileRepository.FoundFile, AccessDenied | FileNotFound | StorageUnavailable> =>
  Effect.flatMap(
    files.findAccess(request.apiKey, request.fileId),
    ({ file, owner }): Effect.Effect<FileRepository.FoundFile, AccessDenied | FileNotFound> => {
      if (Option.isNone(owner)) return Effect.fail(new AccessDenied())
      if (Option.isNone(file)) return Effect.fail(new FileNotFound())
      return file.value.ownerId === owner.value ? Effect.succeed(file.value) : Effect.fail(new AccessDenied())
    }
  )

/**
 * An operation's two entry points: on ports the caller holds, or on the ports of the context.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operation<A> {
  readonly runWith: (ports: Ports, input: Input) => Effect.Effect<A, GetFileDataError>
  readonly run: (
    input: Input
  ) => Effect.Effect<A, GetFileDataError, FileRepository.FileRepository | RateLimiter.RateLimiter>
}

/**
 * The operation that reads its request with `parse` and answers with `answer` (see {@link handle}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const operation = <R extends Credentials, A>(
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
  answer: (files: FileRepository.FileRepository, request: R, file: FileRepository.FoundFile) => A
): Operation<A> => {
  const runWith = (held: Ports, input: Input) => handle(held, input, parse, answer)
  return { runWith, run: (input) => Effect.flatMap(ports, (held) => runWith(held, input)) }
}
