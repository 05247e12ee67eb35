/**
 * A fixture as an import works with it: decoded users, files and submissions, the entries an import runs
 * through, and how a refusal names them. The rules that check them against storage are `ImportRules`; the
 * document format itself, its decoding and the reading of its text, is the `@filedata/fixture` package.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { ApiKeyText, FileId, UserId } from "../shared/FileData.js"

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
 * submissions), or a batch of submissions. Users and files carry their position in `$.users` and `$.files`.
 *
 * @since 0.1.0
 * @category models
 */
export type FixtureEntry = Data.TaggedEnum<{
  User: { readonly user: FixtureUser; readonly index: number }
  File: { readonly file: FixtureFileHeader; readonly index: number }
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
 * What an import reads: a fixture decoded whole, or the entries of one read as a stream (`FixtureReader` of
 * `@filedata/fixture`), whose failures the import passes on.
 *
 * @since 0.1.0
 * @category models
 */
export type FixtureSource<E = never, R = never> = Fixture | Stream.Stream<FixtureEntry, E, R>

/**
 * The entries of a source that is either a stream of them or a document decoded whole, whose entries
 * `decoded` lists.
 *
 * @since 0.1.0
 * @category conversions
 */
export const sourceEntries = <D, Entry, E, R>(
  source: D | Stream.Stream<Entry, E, R>,
  decoded: (document: D) => Iterable<Entry>
): Stream.Stream<Entry, E, R> =>
  Predicate.hasProperty(source, Stream.StreamTypeId)
    ? (source as Stream.Stream<Entry, E, R>)
    : Stream.fromIterable(decoded(source as D))

/**
 * The entries of decoded files, made by `make` (an entry type's constructors): per file one batch of its
 * submissions, if it has any, then the file without them and with its position, as a reader hands them out.
 *
 * @since 0.1.0
 * @category conversions
 */
export const fileEntries = <F extends { readonly submissions: ReadonlyArray<FixtureSubmission> }, B, H>(
  files: ReadonlyArray<F>,
  make: {
    readonly Submissions: (args: { readonly submissions: ReadonlyArray<FileSubmission> }) => B
    readonly File: (args: { readonly file: Omit<F, "submissions">; readonly index: number }) => H
  }
): Array<B | H> =>
  files.flatMap(({ submissions, ...file }, index) => [
    ...(submissions.length === 0
      ? []
      : [make.Submissions({ submissions: submissions.map((submission) => ({ ...submission, file: index })) })]),
    make.File({ file, index })
  ])

/**
 * The entries of a source; a decoded fixture gives one batch of submissions per file.
 *
 * @since 0.1.0
 * @category conversions
 */
export const entries = <E = never, R = never>(source: FixtureSource<E, R>): Stream.Stream<FixtureEntry, E, R> =>
  sourceEntries(source, (fixture: Fixture) => [
    ...fixture.users.map((user, index) => FixtureEntry.User({ user, index })),
    ...fileEntries(fixture.files, FixtureEntry)
  ])

/**
 * Issues a refusal lists at most; further ones are only counted (`FixtureInvalid.omitted`).
 *
 * @since 0.1.0
 * @category constants
 */
export const issueLimit = 1000
