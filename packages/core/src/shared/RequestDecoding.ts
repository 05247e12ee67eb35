/**
 * The strict reading of a request body, shared by every operation: unknown members refused, problems listed by
 * JSON Pointer in fixed words (never a refused value, which may be a key), and bounded work whatever the body.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { FileId, InstantFromIso } from "./FileData.js"
import { InvalidRequest, Issue, invalidRequest, issueLimit, pointer } from "./FileDataError.js"
import * as TextRules from "./TextRules.js"

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

/**
 * The position the body's `after` carries, read by `decode` (a cursor kind's, bound to the body's `fileId`): none
 * when there is no `after`, or when `fileId` breaks the text rules (refused already; its cursor cannot be told
 * apart). An `after` that `decode` refuses adds the issue `detail` on `/after` to `found`.
 *
 * @since 0.3.0
 * @category decoding
 */
export const afterCursor = (
  body: unknown,
  decode: (fileId: FileId, cursor: string) => Option.Option<string>,
  detail: string,
  found: Array<Issue>
): Option.Option<string> => {
  const fileId = member(body, "fileId")
  const after = member(body, "after")
  if (typeof fileId !== "string" || !TextRules.isId(fileId) || typeof after !== "string" || after === "") {
    return Option.none()
  }
  const position = decode(FileId.make(fileId), after)
  if (Option.isNone(position)) found.push(new Issue({ pointer: pointer("after"), detail }))
  return position
}

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
 * What a refusal says of a missing `apiKey` when the request carried an `Authorization` header field: the key
 * goes in the body, and the header is not read.
 *
 * @since 0.2.0
 * @category constants
 */
export const keyInBodyDetail =
  'is required: send the API key in the JSON body as "apiKey" (the Authorization header is ignored)'

const keyRequired = (issue: Issue): boolean => issue.pointer === "/apiKey" && issue.detail === "is required"

/**
 * A refusal of a request that carried an `Authorization` header field, its missing `apiKey` told where the key
 * goes ({@link keyInBodyDetail}); any other refusal as it was.
 *
 * @since 0.2.0
 * @category decoding
 */
export const keyInHeader = (failure: InvalidRequest): InvalidRequest =>
  failure.reason === "InvalidPayload" && failure.issues.some(keyRequired)
    ? new InvalidRequest({
        reason: failure.reason,
        omitted: failure.omitted,
        issues: failure.issues.map((issue) =>
          keyRequired(issue) ? new Issue({ pointer: issue.pointer, detail: keyInBodyDetail }) : issue
        )
      })
    : failure
