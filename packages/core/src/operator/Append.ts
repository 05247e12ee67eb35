/**
 * Submissions appended to files that exist, as an append works with them: the decoded document, the entries
 * an append runs through, and the rules that check them against storage, which every adapter of
 * `OperatorStore` shares. The document format, its decoding and the reading of its text, is the
 * `@filedata/fixture` package (`AppendDocument`, `AppendReader`); problems are `Fixture.FixtureInvalid`, by
 * JSON path, as for an import.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import type { FileId } from "../shared/FileData.js"
import {
  type FileSubmission,
  type FixtureInvalid,
  FixtureIssue,
  type FixtureSubmission,
  fileEntries,
  jsonPath,
  sourceEntries
} from "./Fixture.js"
import { type StagedSubmissions, stageStream } from "./ImportRules.js"

/**
 * A file entry of an append without its submissions: which file, and the `VisitCounter` that replaces the
 * stored one, when given.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppendFileHeader {
  readonly id: FileId
  readonly VisitCounter?: number
}

/**
 * A file entry of an append with the submissions to add to it, in document order.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppendFile extends AppendFileHeader {
  readonly submissions: ReadonlyArray<FixtureSubmission>
}

/**
 * A decoded append document; entries keep their document order so storage can name them by path.
 *
 * @since 0.1.0
 * @category models
 */
export interface Append {
  readonly files: ReadonlyArray<AppendFile>
}

/**
 * One step of an append, in document order: a file entry (once its object ends, after its submissions), or
 * a batch of submissions with their file's position in `$.files`. File entries carry their position in
 * `$.files`, since a refused entry leaves a gap.
 *
 * @since 0.1.0
 * @category models
 */
export type AppendEntry = Data.TaggedEnum<{
  File: { readonly file: AppendFileHeader; readonly index: number }
  Submissions: { readonly submissions: ReadonlyArray<FileSubmission> }
}>

/**
 * Constructors and matchers of {@link AppendEntry}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const AppendEntry = Data.taggedEnum<AppendEntry>()

/**
 * What an append reads: a document decoded whole, or the entries of one read as a stream (`AppendReader` of
 * `@filedata/fixture`), whose failures the append passes on.
 *
 * @since 0.1.0
 * @category models
 */
export type AppendSource<E = never, R = never> = Append | Stream.Stream<AppendEntry, E, R>

/**
 * The entries of a source; a decoded document gives one batch of submissions per file.
 *
 * @since 0.1.0
 * @category conversions
 */
export const entries = <E = never, R = never>(source: AppendSource<E, R>): Stream.Stream<AppendEntry, E, R> =>
  sourceEntries(source, (append: Append) => fileEntries(append.files, AppendEntry))

/**
 * A file entry of an append and its position in `$.files`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutlineFile extends AppendFileHeader {
  readonly index: number
}

/**
 * The file entries of an append and how many submissions each brings, without the submissions themselves:
 * what the checks against storage and the counters need, small whatever the number of submissions.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppendOutline {
  readonly files: ReadonlyArray<OutlineFile>
  /** Submissions per position in `$.files`; a position no file entry has is a batch no entry claimed. */
  readonly appended: ReadonlyArray<number>
}

/**
 * What an append's entries gave: the outline, the number of submissions staged, and the source's refusal
 * when it refused entries (`FixtureInvalid`) but went on handing out the file entries that decoded.
 *
 * @since 0.1.0
 * @category models
 */
export interface Staged extends AppendOutline, StagedSubmissions {}

/**
 * Runs an append's entries, as an adapter's `appendSubmissions` does, the way an import runs its own
 * (`ImportRules.stageStream`): file entries are kept with their positions, each batch of submissions goes to
 * `stage` as it arrives, so only one batch is ever held.
 *
 * @since 0.1.0
 * @category conversions
 */
export const stageEntries = <E2, R2, E = never, R = never>(
  source: AppendSource<E, R>,
  stage: (submissions: ReadonlyArray<FileSubmission>) => Effect.Effect<void, E2, R2>
): Effect.Effect<Staged, Exclude<E, FixtureInvalid> | E2, R | R2> =>
  Effect.suspend(() => {
    const appended: Array<number> = []
    const counted = (submissions: ReadonlyArray<FileSubmission>) => {
      for (const { file } of submissions) appended[file] = (appended[file] ?? 0) + 1
      return stage(submissions)
    }
    return Effect.map(stageStream(entries(source), counted), ({ kept, ...staged }) => ({
      files: kept.map((entry) => ({ ...entry.file, index: entry.index })),
      // A batch may name a position no earlier batch did: the gaps are files without submissions.
      appended: Array.from(appended, (n) => n ?? 0),
      ...staged
    }))
  })

/**
 * The distinct file ids an append names: what storage must look up.
 *
 * @since 0.1.0
 * @category conflicts
 */
export const lookups = (outline: AppendOutline): Array<string> => [...new Set(outline.files.map((file) => file.id))]

/**
 * Every entry of an append that storage must refuse, by JSON path, given the stored `SubmissionCounter` of
 * each file among {@link lookups} that exists: an id no file has, a file named twice, a counter the append
 * would take past the largest safe integer, submissions of no file entry (unless the source refused: it
 * named the entries it could not decode). Every adapter refuses the same way, together with the source's
 * own refusal (`ImportRules.refusal`).
 *
 * @since 0.1.0
 * @category conflicts
 */
export const problems = (staged: Staged, counters: ReadonlyMap<string, number>): Array<FixtureIssue> => {
  const issue = (path: ReadonlyArray<PropertyKey>, detail: string) => new FixtureIssue({ path: jsonPath(path), detail })
  const seen = new Set<string>()
  const claimed = new Set(staged.files.map((file) => file.index))
  return [
    ...staged.files.flatMap((file) => {
      if (seen.has(file.id)) return [issue(["files", file.index, "id"], "file id appears twice")]
      seen.add(file.id)
      const stored = counters.get(file.id)
      if (stored === undefined) return [issue(["files", file.index, "id"], "no file has this id")]
      // After a refusal the count may fall short, never over: what it finds past the bound is so.
      const added = staged.appended[file.index] ?? 0
      return stored + added > Number.MAX_SAFE_INTEGER
        ? [
            issue(
              ["files", file.index, "submissions"],
              `would take SubmissionCounter (${stored}) past the largest safe integer, ${Number.MAX_SAFE_INTEGER}`
            )
          ]
        : []
    }),
    ...(Option.isSome(staged.refused)
      ? []
      : staged.appended.flatMap((count, f) =>
          !claimed.has(f) && count > 0 ? [issue(["files", f, "id"], "is required")] : []
        ))
  ]
}
