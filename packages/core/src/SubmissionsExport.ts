/**
 * The body of an export (`ExportSubmissions`) in its format, written piece by piece as the pages are read, in
 * pieces of about `FileDataJson.maxPieceLength`, so an export of any size is never one string.
 *
 * - NDJSON: each submission's stored entry (`SubmissionEntry`), the text the File reply holds for it, then `\n`.
 * - CSV (RFC 4180, CRLF): the header `createdDate` and the file's content names, then one row per submission.
 *   A cell is quoted when it holds a comma, a quote, CR or LF (quotes doubled); a cell beginning with `=`, `+`,
 *   `-`, `@`, a tab or CR is prefixed with `'` (OWASP's rule against CSV injection), header cells too.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { ExportReply, Format } from "./ExportSubmissions.js"
import type { StorageUnavailable } from "./FileDataError.js"
import * as Pieces from "./internal/pieces.js"
import * as SubmissionEntry from "./SubmissionEntry.js"

/**
 * The `Content-Type` of each format.
 *
 * @since 0.2.0
 * @category constants
 */
export const contentTypes: Readonly<Record<Format, string>> = {
  csv: "text/csv; charset=utf-8",
  ndjson: "application/x-ndjson"
}

/**
 * The file name of an export: the file id with the format's extension, every character that is not an ASCII
 * letter, digit, `.`, `-` or `_` replaced by `_` (the form every client reads).
 *
 * @since 0.2.0
 * @category encoding
 */
export const fileName = (fileId: string, format: Format): string =>
  `${fileId.replace(/[^A-Za-z0-9._-]/gu, "_").replace(/^\./u, "_")}.${format}`

/**
 * The `Content-Disposition` of an export: `attachment` with the ASCII {@link fileName}, and the file id as it
 * is in `filename*` (RFC 6266, UTF-8 percent-encoded), which current browsers prefer.
 *
 * @since 0.2.0
 * @category encoding
 */
export const contentDisposition = (fileId: string, format: Format): string => {
  const exact = encodeURIComponent(`${fileId}.${format}`).replace(
    /['()*]/gu,
    (c) => `%${(c.codePointAt(0) as number).toString(16).toUpperCase()}`
  )
  return `attachment; filename="${fileName(fileId, format)}"; filename*=UTF-8''${exact}`
}

// The first characters a spreadsheet may read as the start of a formula.
const FORMULA = /^[=+\-@\t\r]/u
const QUOTED = /[",\r\n]/u

/**
 * Whether a cell's text gets the `'` prefix: it begins with `=`, `+`, `-`, `@`, a tab or CR.
 *
 * @since 0.2.0
 * @category encoding
 */
export const needsPrefix = (text: string): boolean => FORMULA.test(text)

/**
 * One CSV cell: the text with the `'` prefix when {@link needsPrefix}, quoted (quotes doubled) when it holds a
 * comma, a quote, CR or LF.
 *
 * @since 0.2.0
 * @category encoding
 */
export const csvCell = (text: string): string => {
  const cell = FORMULA.test(text) ? `'${text}` : text
  return QUOTED.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell
}

/**
 * The CSV header row: `createdDate`, then the content names, ended by CRLF.
 *
 * @since 0.2.0
 * @category encoding
 */
export const csvHeader = (names: ReadonlyArray<string>): string =>
  `${["createdDate", ...names].map(csvCell).join(",")}\r\n`

/**
 * The CSV row of a submission's entry under the header of `names`: its `createdDate` (never quoted nor prefixed:
 * a timestamp), then each name's value, empty where the submission lacks the name.
 *
 * @since 0.2.0
 * @category encoding
 */
export const csvRows = (names: ReadonlyArray<string>): ((entry: SubmissionEntry.SubmissionEntry) => string) => {
  const columns = new Map<string, number>()
  for (let i = 0; i < names.length; i++) columns.set(names[i] as string, i)
  const empty: Array<string> = names.map(() => "")
  return (entry) => {
    const { contentJson, createdDate } = SubmissionEntry.parse(entry)
    // Stored content is a JSON object of strings (the import's rules).
    const content = JSON.parse(contentJson) as Record<string, string>
    const cells = empty.slice()
    for (const name in content) {
      const at = columns.get(name)
      if (at !== undefined) cells[at] = csvCell(content[name] as string)
    }
    return cells.length === 0 ? `${createdDate}\r\n` : `${createdDate},${cells.join(",")}\r\n`
  }
}

/**
 * The NDJSON line of an entry: the entry itself, the File reply's text of the submission, and `\n`.
 *
 * @since 0.2.0
 * @category encoding
 */
export const ndjsonLine = (entry: SubmissionEntry.SubmissionEntry): string => `${entry}\n`

// A page's lines gathered into pieces of about `maxPieceLength`, `before` at the start of the first.
const piecesOf = (
  entries: ReadonlyArray<SubmissionEntry.SubmissionEntry>,
  line: (entry: SubmissionEntry.SubmissionEntry) => string,
  before: string
): Array<string> => {
  const out: Array<string> = []
  let piece = before
  for (let i = 0; i < entries.length; i++) {
    const text = line(entries[i] as SubmissionEntry.SubmissionEntry)
    if (piece.length > 0 && piece.length + text.length >= Pieces.maxPieceLength) {
      out.push(piece)
      piece = ""
    }
    piece += text
  }
  if (piece.length > 0 || out.length === 0) out.push(piece)
  return out
}

// Where the writing stands between pages: the position to read after, and each entry's line, known once the
// header is written (undefined before the first page).
interface Position {
  readonly after: string | undefined
  readonly line: ((entry: SubmissionEntry.SubmissionEntry) => string) | undefined
}

const start: Position = { after: undefined, line: undefined }

// The line of each entry, and what comes before the first: the CSV header, read once from the stored names.
const begin = (
  reply: ExportReply
): Effect.Effect<
  readonly [line: (entry: SubmissionEntry.SubmissionEntry) => string, head: string],
  StorageUnavailable
> =>
  reply.format === "ndjson"
    ? Effect.succeed([ndjsonLine, ""] as const)
    : Effect.map(reply.contentNames, (names) => [csvRows(names), csvHeader(names)] as const)

// Reads one page and renders it as the next pieces of the body; no next position after the last page.
const step = (
  reply: ExportReply,
  position: Position
): Effect.Effect<readonly [pieces: Array<string>, next: Position | undefined], StorageUnavailable> =>
  Effect.flatMap(
    position.line === undefined ? begin(reply) : Effect.succeed([position.line, ""] as const),
    ([line, head]) =>
      Effect.map(reply.submissionPage(position.after), (page) => [
        piecesOf(page.entries, line, head),
        // An empty page ends the export whatever it says: the same page is never asked for twice.
        page.hasMore && page.entries.length > 0 ? { after: page.next, line } : undefined
      ])
  )

/**
 * Writes the whole body through `write`, piece by piece, reading the next page only once `write` is done with
 * the last: the transport decides how to wait for a slow reader. An export of one short page is one piece,
 * `last`.
 *
 * @since 0.2.0
 * @category encoding
 */
export const writeTo = <E, R>(
  reply: ExportReply,
  write: (piece: string, last: boolean) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | StorageUnavailable, R> =>
  Pieces.writeAll(start, (position: Position) => step(reply, position), write)

/**
 * The whole body as a stream of text pieces; pages are read as the stream is pulled.
 *
 * @since 0.2.0
 * @category encoding
 */
export const encode = (reply: ExportReply): Stream.Stream<string, StorageUnavailable> =>
  Pieces.stream(start, (position: Position) => step(reply, position))
