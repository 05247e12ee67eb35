/**
 * The fixture format of the contract: users with plain-text API keys, and files with their submissions.
 * Decoding applies the defaults and every check that needs no storage; problems are named by JSON path.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
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
  issues: Schema.Array(FixtureIssue),
  /** Issues found beyond those listed: a broken generator can produce millions, and memory stays bounded. */
  omitted: Schema.optionalWith(Schema.NonNegativeInt, { default: () => 0 })
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return [
      ...this.issues.map((issue) => `${issue.path}: ${issue.detail}`),
      ...(this.omitted > 0 ? [`and ${this.omitted} more`] : [])
    ].join("\n")
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

const FixtureSubmissionSchema = Schema.Struct({
  createdDate: InstantFromIso,
  contentJson: Schema.propertySignature(ContentJson).pipe(Schema.fromKey("content"))
}).annotations(strict)

const FixtureFileSchema = Schema.Struct({
  id: FileId,
  userId: UserId,
  name: Schema.String,
  creationDate: InstantFromIso,
  publicAvailability: Schema.optionalWith(Schema.Boolean, { exact: true, default: () => false }),
  SubmissionCounter: Schema.optionalWith(Schema.NonNegativeInt, { exact: true }),
  VisitCounter: Schema.optionalWith(Schema.NonNegativeInt, { exact: true, default: () => 0 }),
  submissions: Schema.optionalWith(Schema.Array(FixtureSubmissionSchema), { exact: true, default: () => [] })
}).annotations(strict)

const FixtureUserSchema = Schema.Struct({
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
  users: Schema.optionalWith(Schema.Array(FixtureUserSchema), { exact: true, default: () => [] }),
  files: Schema.optionalWith(Schema.Array(FixtureFileSchema), { exact: true, default: () => [] })
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
 * A file's metadata ready to store, with every default applied.
 *
 * @since 0.1.0
 * @category models
 */
export interface FixtureFileHeader {
  readonly id: FileId
  readonly userId: UserId
  readonly name: string
  readonly creationDate: number
  readonly publicAvailability: boolean
  readonly SubmissionCounter: number
  readonly VisitCounter: number
}

/**
 * A file ready to store, with every default applied.
 *
 * @since 0.1.0
 * @category models
 */
export interface FixtureFile extends FixtureFileHeader {
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

/**
 * The users and file metadata of a fixture, without its submissions: what the checks against storage need,
 * small enough to hold whatever the number of submissions.
 *
 * @since 0.1.0
 * @category models
 */
export interface FixtureOutline {
  readonly users: ReadonlyArray<FixtureUser>
  readonly files: ReadonlyArray<FixtureFileHeader>
}

const issuesOf = (error: ParseResult.ParseError, at: ReadonlyArray<PropertyKey>): Array<FixtureIssue> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map(
    (issue) =>
      new FixtureIssue({
        path: jsonPath([...at, ...issue.path]),
        detail:
          issue._tag === "Missing" ? "is required" : issue._tag === "Unexpected" ? "is not allowed" : issue.message
      })
  )

const options = { errors: "all", onExcessProperty: "error" } as const
const decodeDocument = Schema.decodeUnknownEither(FixtureDocument, options)
const decodeUserEntry = Schema.decodeUnknownEither(FixtureUserSchema, options)
const decodeFileEntry = Schema.decodeUnknownEither(FixtureFileSchema, options)
const decodeSubmissionEntry = Schema.decodeUnknownEither(FixtureSubmissionSchema, options)
const decodeInstant = Schema.decodeUnknownEither(InstantFromIso)
const decodeContent = Schema.decodeUnknownEither(ContentJson)

/**
 * Decodes the entry at `$.users[index]`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUser = (value: unknown, index: number): Either.Either<FixtureUser, Array<FixtureIssue>> =>
  Either.mapLeft(decodeUserEntry(value), (error) => issuesOf(error, ["users", index]))

/**
 * Decodes the entry at `$.files[index]`, but for submissions given apart: `SubmissionCounter` defaults to
 * `submissions`, their number.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeFileHeader = (
  value: unknown,
  index: number,
  submissions: number
): Either.Either<FixtureFileHeader, Array<FixtureIssue>> =>
  Either.map(
    Either.mapLeft(decodeFileEntry(value), (error) => issuesOf(error, ["files", index])),
    ({ submissions: _, ...file }) => ({ ...file, SubmissionCounter: file.SubmissionCounter ?? submissions })
  )

/**
 * Decodes the entry at `$.files[file].submissions[index]`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSubmission = (
  value: unknown,
  file: number,
  index: number
): Either.Either<FixtureSubmission, Array<FixtureIssue>> => {
  // Nearly every submission is exactly `{ createdDate, content }`, and then decoding its two fields is decoding
  // it, at half the cost of the struct's generic checks, which matters a million times over. Anything else
  // goes through the struct, which names every problem.
  if (Predicate.isRecord(value) && Object.keys(value).length === 2) {
    const createdDate = decodeInstant(value.createdDate)
    const contentJson = decodeContent(value.content)
    if (Either.isRight(createdDate) && Either.isRight(contentJson)) {
      return Either.right({ createdDate: createdDate.right, contentJson: contentJson.right })
    }
  }
  return Either.mapLeft(decodeSubmissionEntry(value), (error) => issuesOf(error, ["files", file, "submissions", index]))
}

/**
 * Finds ids and keys that appear twice, entry by entry, holding only the ids and keys themselves. Issues name
 * the second occurrence and come grouped: user ids, then API keys, then file ids.
 *
 * @since 0.1.0
 * @category decoding
 */
export interface DuplicateCheck {
  /** Records a user and its keys; false when one of them appeared before. */
  readonly user: (user: FixtureUser, index: number) => boolean
  /** Records a file; false when its id appeared before. */
  readonly file: (file: FixtureFileHeader, index: number) => boolean
  readonly issues: () => Array<FixtureIssue>
}

/**
 * @since 0.1.0
 * @category decoding
 */
export const makeDuplicateCheck = (): DuplicateCheck => {
  const seen = { users: new Set<string>(), keys: new Set<string>(), files: new Set<string>() }
  const found = { users: [] as Array<FixtureIssue>, keys: [] as Array<FixtureIssue>, files: [] as Array<FixtureIssue> }
  const check = (kind: keyof typeof seen, value: string, path: ReadonlyArray<PropertyKey>, what: string) => {
    if (seen[kind].has(value)) {
      found[kind].push(new FixtureIssue({ path: jsonPath(path), detail: `${what} appears twice` }))
      return false
    }
    seen[kind].add(value)
    return true
  }
  return {
    user: (user, index) =>
      [
        check("users", user.id, ["users", index, "id"], "user id"),
        ...user.apiKeys.map((key, position) => check("keys", key, ["users", index, "apiKeys", position], "API key"))
      ].every(Boolean),
    file: (file, index) => check("files", file.id, ["files", index, "id"], "file id"),
    issues: () => [...found.users, ...found.keys, ...found.files]
  }
}

/**
 * Decodes a whole parsed fixture synchronously; see {@link decode}.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeEither = (document: unknown): Either.Either<Fixture, Array<FixtureIssue>> => {
  const result = decodeDocument(document)
  if (Either.isLeft(result)) return Either.left(issuesOf(result.left, []))
  const users = result.right.users
  const files = result.right.files.map((file) => ({
    ...file,
    SubmissionCounter: file.SubmissionCounter ?? file.submissions.length
  }))
  const duplicates = makeDuplicateCheck()
  users.forEach((user, index) => {
    duplicates.user(user, index)
  })
  files.forEach((file, index) => {
    duplicates.file(file, index)
  })
  const issues = duplicates.issues()
  return issues.length > 0 ? Either.left(issues) : Either.right({ users, files })
}

/**
 * Decodes a parsed fixture, applies the defaults and refuses ids or keys that appear twice. A fixture too
 * big to parse whole is read with `FixtureReader` instead, entry by entry.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (document: unknown): Effect.Effect<Fixture, FixtureInvalid> =>
  Either.match(decodeEither(document), {
    onLeft: (issues) => Effect.fail(new FixtureInvalid({ issues })),
    onRight: Effect.succeed
  })

/**
 * A submission and the position of its file in `$.files`. A file's metadata may follow its submissions in
 * the document, so storage learns the file's id only from the file's own entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileSubmission extends FixtureSubmission {
  readonly file: number
}

/**
 * One step of an import, in document order: a user, a file's metadata (once its object ends, after its
 * submissions), or a batch of submissions. Files come in the order of `$.files`.
 *
 * @since 0.1.0
 * @category models
 */
export type FixtureEntry = Data.TaggedEnum<{
  User: { readonly user: FixtureUser }
  File: { readonly file: FixtureFileHeader }
  Submissions: { readonly submissions: ReadonlyArray<FileSubmission> }
}>

/**
 * Constructors and matchers of {@link FixtureEntry}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const FixtureEntry = Data.taggedEnum<FixtureEntry>()

/**
 * What an import reads: a fixture decoded whole, or the entries of one read as a stream (`FixtureReader`),
 * whose failures the import passes on.
 *
 * @since 0.1.0
 * @category models
 */
export type FixtureSource<E = never, R = never> = Fixture | Stream.Stream<FixtureEntry, E, R>

/**
 * The entries of a source; a decoded fixture gives one batch of submissions per file.
 *
 * @since 0.1.0
 * @category conversions
 */
export const entries = <E = never, R = never>(source: FixtureSource<E, R>): Stream.Stream<FixtureEntry, E, R> =>
  Predicate.hasProperty(source, Stream.StreamTypeId)
    ? (source as Stream.Stream<FixtureEntry, E, R>)
    : Stream.fromIterable([
        ...(source as Fixture).users.map((user) => FixtureEntry.User({ user })),
        ...(source as Fixture).files.flatMap(({ submissions, ...file }, index) => [
          ...(submissions.length === 0
            ? []
            : [
                FixtureEntry.Submissions({
                  submissions: submissions.map((submission) => ({ ...submission, file: index }))
                })
              ]),
          FixtureEntry.File({ file })
        ])
      ])

/**
 * Runs an import's entries: users and files are kept, each batch of submissions goes to `stage` as it
 * arrives, so only one batch is ever held. Gives the outline and the number of submissions staged.
 *
 * @since 0.1.0
 * @category conversions
 */
export const collect = <E2, R2, E = never, R = never>(
  source: FixtureSource<E, R>,
  stage: (submissions: ReadonlyArray<FileSubmission>) => Effect.Effect<void, E2, R2>
): Effect.Effect<FixtureOutline & { readonly submissions: number }, E | E2, R | R2> =>
  Effect.suspend(() => {
    const users: Array<FixtureUser> = []
    const files: Array<FixtureFileHeader> = []
    let submissions = 0
    return Stream.runForEach(
      entries(source),
      FixtureEntry.$match({
        User: ({ user }) => Effect.sync(() => void users.push(user)),
        File: ({ file }) => Effect.sync(() => void files.push(file)),
        Submissions: (batch) =>
          Effect.suspend(() => {
            submissions += batch.submissions.length
            return stage(batch.submissions)
          })
      })
    ).pipe(Effect.map(() => ({ users, files, submissions })))
  })

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
export const lookups = (
  fixture: FixtureOutline
): { readonly userIds: Array<string>; readonly fileIds: Array<string> } => {
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
export const conflicts = (fixture: FixtureOutline, existing: Existing): Array<FixtureIssue> => {
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
