/**
 * An import's rules, which every adapter of `OperatorStore` shares: running a source's entries while staging
 * its submissions, the conflicts of what was handed out with what storage holds, and the one refusal that
 * lists both in document order. An append runs its entries the same way (`Append.stageEntries`).
 *
 * @since 0.2.0
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Stream from "effect/Stream"
import {
  entries,
  type FileSubmission,
  type FixtureFileHeader,
  FixtureInvalid,
  FixtureIssue,
  type FixtureSource,
  type FixtureUser,
  issueLimit,
  jsonPath
} from "./Fixture.js"

/**
 * A user of a fixture and its position in `$.users`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutlineUser extends FixtureUser {
  readonly index: number
}

/**
 * A file's metadata and its position in `$.files`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutlineFile extends FixtureFileHeader {
  readonly index: number
}

/**
 * The users and file metadata of a fixture, without its submissions: what the checks against storage need,
 * small enough to hold whatever the number of submissions. Each entry keeps its position in the document,
 * since a refused entry leaves a gap.
 *
 * @since 0.1.0
 * @category models
 */
export interface FixtureOutline {
  readonly users: ReadonlyArray<OutlineUser>
  readonly files: ReadonlyArray<OutlineFile>
}

/**
 * The number of submissions an import or an append staged, and the source's refusal when it refused entries
 * (`FixtureInvalid`) but went on handing out the others that decoded.
 *
 * @since 0.1.0
 * @category models
 */
export interface StagedSubmissions {
  readonly submissions: number
  readonly refused: Option.Option<FixtureInvalid>
}

/**
 * What running a source's entries gave: every entry but the batches of submissions, besides what was staged.
 *
 * @since 0.1.0
 * @category models
 */
export interface StagedEntries<Kept> extends StagedSubmissions {
  readonly kept: ReadonlyArray<Kept>
}

/**
 * What an import's entries gave: the outline, the number of submissions staged, and the source's refusal
 * when it refused entries (`FixtureInvalid`) but went on handing out the users and files that decoded.
 *
 * @since 0.1.0
 * @category models
 */
export interface Staged extends FixtureOutline, StagedSubmissions {}

/**
 * An entry that is a batch of submissions, whatever else a document's entries are.
 *
 * @since 0.1.0
 * @category models
 */
export interface SubmissionsEntry {
  readonly _tag: "Submissions"
  readonly submissions: ReadonlyArray<FileSubmission>
}

const isSubmissions = <Entry extends { readonly _tag: string }>(
  entry: Entry
): entry is Extract<Entry, SubmissionsEntry> => entry._tag === "Submissions"

/**
 * Runs a stream of entries as an import or an append does: each batch of submissions goes to `stage` as it
 * arrives, so only one batch is ever held, and every other entry is kept. A stream that fails with
 * `FixtureInvalid` (a reader of `@filedata/fixture` does at its end, after handing out every entry but
 * submissions that decoded) gives that refusal, so the entries it did hand out can still be checked against
 * storage and every problem reported at once (see {@link refusal}); nothing may be written then. A failure of
 * staging, or any other, is passed on.
 *
 * @since 0.1.0
 * @category conversions
 */
export const stageStream = <Entry extends { readonly _tag: string }, E2, R2, E = never, R = never>(
  entries: Stream.Stream<Entry, E, R>,
  stage: (submissions: ReadonlyArray<FileSubmission>) => Effect.Effect<void, E2, R2>
): Effect.Effect<StagedEntries<Exclude<Entry, SubmissionsEntry>>, Exclude<E, FixtureInvalid> | E2, R | R2> =>
  Effect.suspend(() => {
    const kept: Array<Exclude<Entry, SubmissionsEntry>> = []
    let submissions = 0
    let refused = Option.none<FixtureInvalid>()
    const handedOut = Stream.catchAll(entries, (error) => {
      if (!(error instanceof FixtureInvalid)) return Stream.fail(error as Exclude<E, FixtureInvalid>)
      refused = Option.some(error)
      return Stream.empty
    })
    return Stream.runForEach(handedOut, (entry) =>
      isSubmissions(entry)
        ? Effect.suspend(() => {
            submissions += entry.submissions.length
            return stage(entry.submissions)
          })
        : // A type guard narrows no type parameter in its false branch.
          Effect.sync(() => void kept.push(entry as Exclude<Entry, SubmissionsEntry>))
    ).pipe(Effect.map(() => ({ kept, submissions, refused })))
  })

/**
 * Runs an import's entries, as an adapter's `importFixture` does ({@link stageStream}): users and files'
 * metadata are kept with their positions, each batch of submissions goes to `stage` as it arrives. Gives the
 * outline, to check against storage and write, the number of submissions staged, and the source's refusal.
 *
 * @since 0.1.0
 * @category conversions
 */
export const stageEntries = <E2, R2, E = never, R = never>(
  source: FixtureSource<E, R>,
  stage: (submissions: ReadonlyArray<FileSubmission>) => Effect.Effect<void, E2, R2>
): Effect.Effect<Staged, Exclude<E, FixtureInvalid> | E2, R | R2> =>
  Effect.map(stageStream(entries(source), stage), ({ kept, ...staged }) => ({
    users: kept.flatMap((entry) => (entry._tag === "User" ? [{ ...entry.user, index: entry.index }] : [])),
    files: kept.flatMap((entry) => (entry._tag === "File" ? [{ ...entry.file, index: entry.index }] : [])),
    ...staged
  }))

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
    ...fixture.users.flatMap((user) => [
      ...(existing.users.has(user.id) ? [issue(["users", user.index, "id"], "already exists")] : []),
      ...user.apiKeys.flatMap((key, k) =>
        existing.keyInUse(key) ? [issue(["users", user.index, "apiKeys", k], "is already in use")] : []
      )
    ]),
    ...fixture.files.flatMap((file) => [
      ...(existing.files.has(file.id) ? [issue(["files", file.index, "id"], "already exists")] : []),
      ...(fixtureUsers.has(file.userId) || existing.users.has(file.userId)
        ? []
        : [issue(["files", file.index, "userId"], "is not a user of this fixture or of the database")])
    ])
  ]
}

const ENTRY = /^\$\.(users|files)\[(\d+)\]/

// The document's own problems first, then users, then files, each by position.
const byEntry: Order.Order<FixtureIssue> = Order.mapInput(
  Order.tuple(Order.number, Order.number),
  (issue: FixtureIssue): [number, number] => {
    const match = ENTRY.exec(issue.path)
    return match === null ? [0, 0] : [match[1] === "users" ? 1 : 2, Number(match[2])]
  }
)

/**
 * The refusal of an import or an append, if any: the source's own (decoding, duplicates) and the conflicts
 * with storage together, ordered by path: the document's own problems, then users, then files, each by
 * position, and within an entry its decoding problems before its conflicts. At most `Fixture.issueLimit` are
 * listed.
 *
 * @since 0.1.0
 * @category conflicts
 */
export const refusal = (
  refused: Option.Option<FixtureInvalid>,
  conflicts: ReadonlyArray<FixtureIssue>
): Option.Option<FixtureInvalid> => {
  const decoding = Option.match(refused, { onNone: () => [], onSome: (error) => error.issues })
  const omitted = Option.match(refused, { onNone: () => 0, onSome: (error) => error.omitted })
  if (decoding.length === 0 && omitted === 0 && conflicts.length === 0) return Option.none()
  // A stable sort: what the source and the conflicts found of one entry keeps its order.
  const issues = Arr.sort([...decoding, ...conflicts], byEntry)
  return Option.some(
    new FixtureInvalid({
      issues: issues.slice(0, issueLimit),
      omitted: omitted + Math.max(0, issues.length - issueLimit)
    })
  )
}
