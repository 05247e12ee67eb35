/**
 * An optional capability of `FileRepository`: pages of submissions handed over already encoded as a reply
 * writes them, joined where the data is (SQLite joins them in the database, which makes big replies faster:
 * docs/performance.md#pages-joined-in-storage). An adapter author can leave it out: {@link of} then writes it
 * from the port's domain method, `readSubmissions`, with the same bytes on the wire, and every conformance case
 * passes either way.
 *
 * @since 0.2.0
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as ExportEncoder from "../export/ExportEncoder.js"
import type { FileId } from "./FileData.js"
import type { StorageUnavailable } from "./FileDataError.js"
import type {
  Change,
  ChangePage,
  ChangeRange,
  FileRepository,
  SubmissionPage,
  SubmissionRange
} from "./FileRepository.js"
import * as SubmissionEntry from "./SubmissionEntry.js"

/**
 * A page of submissions as a reply writes it: the entries of a `SubmissionPage`, in the same order, joined (by
 * commas for a reply, by line ends for an export), and how many they are. The adapter hands them over as it has
 * them, as text or as UTF-8 bytes, so a big page need never be a string.
 *
 * @since 0.1.0
 * @category models
 */
export type JoinedPage =
  | {
      readonly joined: string | Uint8Array
      readonly count: number
      readonly next: string
      readonly hasMore: true
    }
  | {
      readonly joined: string | Uint8Array
      readonly count: number
      readonly next: string | undefined
      readonly hasMore: false
    }

/**
 * How each entry of a joined page is written: as stored (`SubmissionEntry`, the File reply's form), or with the
 * submission's id first (`SubmissionEntry.withId`, the incremental read's form).
 *
 * @since 0.3.0
 * @category models
 */
export type EntryForm = "stored" | "withId"

/**
 * What each submission of an export's page becomes: its NDJSON line (the entry with its id first, and `\n`), or its CSV row under
 * the header of `names` (`ExportEncoder.csvRows`, CRLF-ended).
 *
 * @since 0.2.0
 * @category models
 */
export type ExportRows =
  | { readonly format: "ndjson" }
  | { readonly format: "csv"; readonly names: ReadonlyArray<string> }

/**
 * A page of a file's change feed as the feed's reply writes it: the changes of a `ChangePage`, in the same order,
 * each as {@link changeText}, joined by commas; how many they are; `next` and `hasMore` as the `ChangePage`'s.
 *
 * @since 0.3.0
 * @category models
 */
export interface JoinedChanges {
  readonly joined: string | Uint8Array
  readonly count: number
  readonly next: string
  readonly hasMore: boolean
}

/**
 * The capability: its members give the page `readSubmissions` (or `readChanges`) gives for the same range,
 * encoded.
 *
 * @since 0.2.0
 * @category models
 */
export interface EncodedPages {
  /**
   * The page's entries joined by commas; a range without a `limit` may get longer pages, since a joined page
   * holds no strings.
   */
  readonly readJoined: (
    fileId: FileId,
    range: SubmissionRange,
    form: EntryForm
  ) => Effect.Effect<JoinedPage, StorageUnavailable>
  /**
   * Each submission as `rows` says, every row ended by its line end and none between, made from what import and
   * append stored for it (docs/performance.md#export-rows-rendered-at-import).
   */
  readonly readExportRows: (
    fileId: FileId,
    range: SubmissionRange,
    rows: ExportRows
  ) => Effect.Effect<JoinedPage, StorageUnavailable>
  /**
   * The page of the change feed `readChanges` gives, joined. Left out, the feed's reply writes `readChanges`'
   * pages itself, in pieces (docs/performance.md#feed-pages-joined-in-storage), and {@link joinedChanges} joins
   * them.
   */
  readonly readJoinedChanges?: (fileId: FileId, range: ChangeRange) => Effect.Effect<JoinedChanges, StorageUnavailable>
}

/**
 * A domain page as a {@link JoinedPage}, its entries written in `form` and joined by commas.
 *
 * @since 0.1.0
 * @category constructors
 */
export const join = (page: SubmissionPage, form: EntryForm = "stored"): JoinedPage => {
  const joined =
    form === "stored"
      ? page.entries.join(",")
      : Arr.zipWith(page.entries, page.ids, (entry, id) => SubmissionEntry.withId(id, entry)).join(",")
  return page.hasMore
    ? { joined, count: page.entries.length, next: page.next, hasMore: true }
    : { joined, count: page.entries.length, next: page.next, hasMore: false }
}

/**
 * A domain page rendered as an export's rows.
 *
 * @since 0.2.0
 * @category constructors
 */
export const render = (rows: ExportRows, page: SubmissionPage): JoinedPage => {
  const joined = ExportEncoder.renderEntries(rows, page)
  return page.hasMore
    ? { joined, count: page.entries.length, next: page.next, hasMore: true }
    : { joined, count: page.entries.length, next: page.next, hasMore: false }
}

/**
 * One change as the feed's reply writes it: `{"type":"submission.created","id":…,"createdDate":…,"content":…}`,
 * the stored entry with the change's type and id spliced in front (no content parsed or encoded again), or
 * `{"type":"submission.erased","id":…}`. An id is URL-safe, so it needs no escaping.
 *
 * @since 0.3.0
 * @category encoding
 */
export const changeText = (change: Change): string =>
  change.type === "submission.erased"
    ? `{"type":"submission.erased","id":"${change.id}"}`
    : SubmissionEntry.withMembers(`"type":"submission.created","id":"${change.id}"`, change.entry)

/**
 * A domain page of the change feed as {@link JoinedChanges}.
 *
 * @since 0.3.0
 * @category constructors
 */
export const joinChanges = (page: ChangePage): JoinedChanges => ({
  joined: page.changes.map(changeText).join(","),
  count: page.changes.length,
  next: page.next,
  hasMore: page.hasMore
})

/**
 * The capability written from the port's domain methods: each page of `readSubmissions` joined or rendered. The
 * feed's pages stay domain pages, written in pieces ({@link joinedChanges} joins them where a whole page is asked).
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromSubmissions = (repository: FileRepository): EncodedPages => ({
  readJoined: (fileId, range, form) =>
    Effect.map(repository.readSubmissions(fileId, range), (page) => join(page, form)),
  readExportRows: (fileId, range, rows) =>
    Effect.map(repository.readSubmissions(fileId, range), (page) => render(rows, page))
})

const defaults = new WeakMap<FileRepository, EncodedPages>()

/**
 * The repository's own `encodedPages`, or the default {@link fromSubmissions} (made once per repository).
 *
 * @since 0.2.0
 * @category accessors
 */
export const of = (repository: FileRepository): EncodedPages => {
  if (repository.encodedPages !== undefined) return repository.encodedPages
  let pages = defaults.get(repository)
  if (pages === undefined) {
    pages = fromSubmissions(repository)
    defaults.set(repository, pages)
  }
  return pages
}

/**
 * The repository's way to read joined pages of the change feed: its own `readJoinedChanges`, or the default
 * written from `readChanges` (what the conformance suite holds an adapter's to).
 *
 * @since 0.3.0
 * @category accessors
 */
export const joinedChanges = (
  repository: FileRepository
): ((fileId: FileId, range: ChangeRange) => Effect.Effect<JoinedChanges, StorageUnavailable>) =>
  repository.encodedPages?.readJoinedChanges ??
  ((fileId, range) => Effect.map(repository.readChanges(fileId, range), joinChanges))

const decoder = new TextDecoder()

/**
 * A joined page's entries as text, whichever way the adapter handed them over.
 *
 * @since 0.1.0
 * @category destructors
 */
export const joinedText = (page: JoinedPage | JoinedChanges): string =>
  typeof page.joined === "string" ? page.joined : decoder.decode(page.joined)
