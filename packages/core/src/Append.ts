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
import * as Stream from "effect/Stream"
import type { FileId } from "./FileData.js"
import {
  type FileSubmission,
  FixtureIssue,
  type FixtureSubmission,
  fileEntries,
  jsonPath,
  sourceEntries
} from "./Fixture.js"

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
 * a batch of submissions with their file's position in `$.files`. Files come in the order of `$.files`.
 *
 * @since 0.1.0
 * @category models
 */
export type AppendEntry = Data.TaggedEnum<{
  File: { readonly file: AppendFileHeader }
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
 * The file entries of an append and how many submissions each brings, without the submissions themselves:
 * what the checks against storage and the counters need, small whatever the number of submissions.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppendOutline {
  readonly files: ReadonlyArray<AppendFileHeader>
  /** Submissions per position in `$.files`; a position past `files` is a batch no file entry claimed. */
  readonly appended: ReadonlyArray<number>
  /** Submissions in all. */
  readonly submissions: number
}

/**
 * Runs an append's entries, as an adapter's `appendSubmissions` does: file entries are kept, each batch of
 * submissions goes to `stage` as it arrives, so only one batch is ever held.
 *
 * @since 0.1.0
 * @category conversions
 */
export const stageEntries = <E2, R2, E = never, R = never>(
  source: AppendSource<E, R>,
  stage: (submissions: ReadonlyArray<FileSubmission>) => Effect.Effect<void, E2, R2>
): Effect.Effect<AppendOutline, E | E2, R | R2> =>
  Effect.suspend(() => {
    const outline = { files: [] as Array<AppendFileHeader>, appended: [] as Array<number>, submissions: 0 }
    const count = (submissions: ReadonlyArray<FileSubmission>) => {
      for (const { file } of submissions) outline.appended[file] = (outline.appended[file] ?? 0) + 1
      outline.submissions += submissions.length
    }
    return Stream.runForEach(entries(source), (entry) =>
      entry._tag === "File"
        ? Effect.sync(() => void outline.files.push(entry.file))
        : Effect.suspend(() => {
            count(entry.submissions)
            return stage(entry.submissions)
          })
    ).pipe(
      // A batch may name a position no earlier batch did: the gaps are files without submissions.
      Effect.map(() => ({ ...outline, appended: Array.from(outline.appended, (n) => n ?? 0) }))
    )
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
 * would take past the largest safe integer, submissions of no file entry. Every adapter refuses the same way.
 *
 * @since 0.1.0
 * @category conflicts
 */
export const problems = (outline: AppendOutline, counters: ReadonlyMap<string, number>): Array<FixtureIssue> => {
  const issue = (path: ReadonlyArray<PropertyKey>, detail: string) => new FixtureIssue({ path: jsonPath(path), detail })
  const seen = new Set<string>()
  return [
    ...outline.files.flatMap((file, f) => {
      if (seen.has(file.id)) return [issue(["files", f, "id"], "file id appears twice")]
      seen.add(file.id)
      const stored = counters.get(file.id)
      if (stored === undefined) return [issue(["files", f, "id"], "no file has this id")]
      const added = outline.appended[f] ?? 0
      return stored + added > Number.MAX_SAFE_INTEGER
        ? [
            issue(
              ["files", f, "submissions"],
              `would take SubmissionCounter (${stored}) past the largest safe integer, ${Number.MAX_SAFE_INTEGER}`
            )
          ]
        : []
    }),
    ...outline.appended.flatMap((count, f) =>
      f >= outline.files.length && count > 0 ? [issue(["files", f, "id"], "is required")] : []
    )
  ]
}
