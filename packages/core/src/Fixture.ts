/**
 * The fixture format of the contract: users with plain-text API keys, and files with their submissions.
 * Decoding applies the defaults and every check that needs no storage; problems are named by JSON path.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { ApiKeyText, FileId, InstantFromIso, UserId } from "./FileData.js"

/**
 * A problem with one entry of a fixture, located by a JSON path such as `$.files[0].submissions[2].createdDate`.
 *
 * @since 0.1.0
 * @category models
 */
export class FixtureIssue extends Schema.Class<FixtureIssue>("FixtureIssue")({
  path: Schema.String,
  detail: Schema.String
}) {}

/**
 * The fixture cannot be imported; nothing of it was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class FixtureInvalid extends Schema.TaggedError<FixtureInvalid>()("FixtureInvalid", {
  issues: Schema.Array(FixtureIssue)
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.issues.map((issue) => `${issue.path}: ${issue.detail}`).join("\n")
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * Renders a path of keys and indexes as a JSON path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const jsonPath = (tokens: ReadonlyArray<PropertyKey>): string =>
  tokens.reduce<string>(
    (path, token) =>
      typeof token === "number"
        ? `${path}[${token}]`
        : IDENTIFIER.test(String(token))
          ? `${path}.${String(token)}`
          : `${path}[${JSON.stringify(String(token))}]`,
    "$"
  )

/**
 * Submission content: an object whose values are strings, kept as its JSON text so that key order and
 * keys such as `__proto__` survive untouched.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentJson = Schema.transformOrFail(Schema.Unknown, Schema.String, {
  strict: true,
  decode: (input, _, ast) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return ParseResult.fail(new ParseResult.Type(ast, input, "must be an object of strings"))
    }
    for (const key of Object.keys(input)) {
      const value = (input as Record<string, unknown>)[key]
      if (typeof value !== "string") {
        return ParseResult.fail(
          new ParseResult.Pointer(key, input, new ParseResult.Type(Schema.String.ast, value, "must be a string"))
        )
      }
    }
    return ParseResult.succeed(JSON.stringify(input))
  },
  encode: (json) => ParseResult.succeed(JSON.parse(json) as unknown)
})

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const FixtureSubmission = Schema.Struct({
  createdDate: InstantFromIso,
  contentJson: Schema.propertySignature(ContentJson).pipe(Schema.fromKey("content"))
}).annotations(strict)

const FixtureFile = Schema.Struct({
  id: FileId,
  userId: UserId,
  name: Schema.String,
  creationDate: InstantFromIso,
  publicAvailability: Schema.optionalWith(Schema.Boolean, { exact: true, default: () => false }),
  SubmissionCounter: Schema.optionalWith(Schema.NonNegativeInt, { exact: true }),
  VisitCounter: Schema.optionalWith(Schema.NonNegativeInt, { exact: true, default: () => 0 }),
  submissions: Schema.optionalWith(Schema.Array(FixtureSubmission), { exact: true, default: () => [] })
}).annotations(strict)

const FixtureUser = Schema.Struct({
  id: UserId,
  apiKeys: Schema.optionalWith(Schema.Array(ApiKeyText), { exact: true, default: () => [] })
}).annotations(strict)

/**
 * The fixture document as written.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FixtureDocument = Schema.Struct({
  users: Schema.optionalWith(Schema.Array(FixtureUser), { exact: true, default: () => [] }),
  files: Schema.optionalWith(Schema.Array(FixtureFile), { exact: true, default: () => [] })
}).annotations({ ...strict, identifier: "Fixture" })

/**
 * A submission ready to store: instant in epoch milliseconds (UTC), content as JSON text.
 *
 * @since 0.1.0
 * @category models
 */
export interface FixtureSubmission {
  readonly createdDate: number
  readonly contentJson: string
}

/**
 * A file ready to store, with every default applied.
 *
 * @since 0.1.0
 * @category models
 */
export interface FixtureFile {
  readonly id: FileId
  readonly userId: UserId
  readonly name: string
  readonly creationDate: number
  readonly publicAvailability: boolean
  readonly SubmissionCounter: number
  readonly VisitCounter: number
  readonly submissions: ReadonlyArray<FixtureSubmission>
}

/**
 * A user and the plain text of its keys, which storage keeps only as hashes.
 *
 * @since 0.1.0
 * @category models
 */
export interface FixtureUser {
  readonly id: UserId
  readonly apiKeys: ReadonlyArray<typeof ApiKeyText.Type>
}

/**
 * A decoded fixture; entries keep their document order so storage can name them by path.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fixture {
  readonly users: ReadonlyArray<FixtureUser>
  readonly files: ReadonlyArray<FixtureFile>
}

const duplicates = <A>(
  entries: ReadonlyArray<A>,
  keyOf: (entry: A) => ReadonlyArray<string>,
  pathOf: (index: number, position: number) => ReadonlyArray<PropertyKey>,
  what: string
): Array<FixtureIssue> => {
  const seen = new Set<string>()
  const issues: Array<FixtureIssue> = []
  entries.forEach((entry, index) => {
    keyOf(entry).forEach((key, position) => {
      if (seen.has(key)) {
        issues.push(new FixtureIssue({ path: jsonPath(pathOf(index, position)), detail: `${what} appears twice` }))
      }
      seen.add(key)
    })
  })
  return issues
}

const decodeDocument = Schema.decodeUnknownEither(FixtureDocument, { errors: "all", onExcessProperty: "error" })

/**
 * Decodes a parsed fixture, applies the defaults and refuses ids or keys that appear twice.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (document: unknown): Effect.Effect<Fixture, FixtureInvalid> => {
  const result = decodeDocument(document)
  if (result._tag === "Left") {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(result.left).map(
      (issue) =>
        new FixtureIssue({
          path: jsonPath(issue.path),
          detail:
            issue._tag === "Missing" ? "is required" : issue._tag === "Unexpected" ? "is not allowed" : issue.message
        })
    )
    return Effect.fail(new FixtureInvalid({ issues }))
  }
  const { files, users } = result.right
  const issues = [
    ...duplicates(
      users,
      (user) => [user.id],
      (index) => ["users", index, "id"],
      "user id"
    ),
    ...duplicates(
      users,
      (user) => user.apiKeys,
      (index, position) => ["users", index, "apiKeys", position],
      "API key"
    ),
    ...duplicates(
      files,
      (file) => [file.id],
      (index) => ["files", index, "id"],
      "file id"
    )
  ]
  if (issues.length > 0) return Effect.fail(new FixtureInvalid({ issues }))
  return Effect.succeed({
    users,
    files: files.map((file) => ({ ...file, SubmissionCounter: file.SubmissionCounter ?? file.submissions.length }))
  })
}

/**
 * What storage already holds of the ids and keys a fixture names: the answer to {@link lookups}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Existing {
  /** Users that exist, among the fixture's users and the owners its files name. */
  readonly users: ReadonlySet<string>
  readonly files: ReadonlySet<string>
  /** Whether an API key (plain text) is already in use; storage compares its hashes. */
  readonly keyInUse: (apiKey: string) => boolean
}

/**
 * The user and file ids storage must look up to find a fixture's conflicts.
 *
 * @since 0.1.0
 * @category conflicts
 */
export const lookups = (fixture: Fixture): { readonly userIds: Array<string>; readonly fileIds: Array<string> } => {
  const userIds = new Set<string>(fixture.users.map((user) => user.id))
  for (const file of fixture.files) userIds.add(file.userId)
  return { userIds: [...userIds], fileIds: fixture.files.map((file) => file.id) }
}

/**
 * Every entry of a fixture that clashes with storage, by JSON path: ids that already exist, keys already
 * in use, files whose user is neither in the fixture nor in storage. Every adapter refuses the same way.
 *
 * @since 0.1.0
 * @category conflicts
 */
export const conflicts = (fixture: Fixture, existing: Existing): Array<FixtureIssue> => {
  const issue = (path: ReadonlyArray<PropertyKey>, detail: string) => new FixtureIssue({ path: jsonPath(path), detail })
  const fixtureUsers = new Set<string>(fixture.users.map((user) => user.id))
  return [
    ...fixture.users.flatMap((user, u) => [
      ...(existing.users.has(user.id) ? [issue(["users", u, "id"], "already exists")] : []),
      ...user.apiKeys.flatMap((key, k) =>
        existing.keyInUse(key) ? [issue(["users", u, "apiKeys", k], "is already in use")] : []
      )
    ]),
    ...fixture.files.flatMap((file, f) => [
      ...(existing.files.has(file.id) ? [issue(["files", f, "id"], "already exists")] : []),
      ...(fixtureUsers.has(file.userId) || existing.users.has(file.userId)
        ? []
        : [issue(["files", f, "userId"], "is not a user of this fixture or of the database")])
    ])
  ]
}
