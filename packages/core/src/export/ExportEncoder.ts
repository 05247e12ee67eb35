/**
 * The body of an export (`ExportSubmissions`) in its format, written page by page as storage gives the pages
 * (`EncodedPages.readExportRows`), each as text or as UTF-8 bytes, so an export of any size is never one string.
 *
 * - NDJSON: each submission's stored entry (`SubmissionEntry`), the text the File reply holds for it, with the
 *   submission's id first (`SubmissionEntry.withId`), then `\n`.
 * - CSV (RFC 4180, CRLF): the header `createdDate` and the file's content names, then one row per submission.
 *   A cell is quoted when it holds a comma, a quote, CR or LF (quotes doubled); a cell beginning with `=`, `+`,
 *   `-`, `@`, a tab or CR is prefixed with `'` (OWASP's rule against CSV injection), header cells too.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as EncodedPages from "../shared/EncodedPages.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import type { SubmissionPage } from "../shared/FileRepository.js"
import * as Pieces from "../shared/internal/pieces.js"
import * as SubmissionEntry from "../shared/SubmissionEntry.js"
import type { SubmissionId } from "../shared/SubmissionId.js"
import type { ExportReply, Format } from "./ExportSubmissions.js"

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
// Either: most cells have neither, and one test says so (a cell is rendered at every import and append).
const SPECIAL = /^[=+\-@\t]|[",\r\n]/u

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
  if (!SPECIAL.test(text)) return text
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
 * A submission's CSV row as import and append store it beside its entry: the `createdDate`, then a cell for each
 * position up to the last of its names (`width` cells, empty where it lacks the name), without the empty cells
 * after those nor the line end. A file's names keep their positions once given (`readContentNames`), so the row
 * stays right under every later header; {@link csvLine} completes it.
 *
 * @since 0.2.0
 * @category models
 */
export interface StoredCsvRow {
  readonly text: string
  readonly width: number
}

/**
 * The {@link StoredCsvRow} of a submission (content as stored: an object of strings) whose names stand at
 * `positions`; undefined when one of its names has none.
 *
 * @since 0.2.0
 * @category encoding
 */
export const storedCsvRow = (
  createdDate: string,
  content: Readonly<Record<string, string>>,
  positions: ReadonlyMap<string, number>
): StoredCsvRow | undefined => rowOf(createdDate, content, positions, false)

// The row's cells up to its last name with a position; a name without one refuses the row, or is left out.
const rowOf = (
  createdDate: string,
  content: Readonly<Record<string, string>>,
  positions: ReadonlyMap<string, number>,
  leaveOut: boolean
): StoredCsvRow | undefined => {
  const cells: Array<string> = []
  for (const name in content) {
    const at = positions.get(name)
    if (at === undefined) {
      if (leaveOut) continue
      return undefined
    }
    while (cells.length <= at) cells.push("")
    cells[at] = csvCell(content[name] as string)
  }
  return { text: cells.length === 0 ? createdDate : `${createdDate},${cells.join(",")}`, width: cells.length }
}

/**
 * A stored row completed under a header of `columns` names: the empty cells it lacks after its last, and CRLF.
 *
 * @since 0.2.0
 * @category encoding
 */
export const csvLine = (text: string, width: number, columns: number): string =>
  `${text}${",".repeat(Math.max(0, columns - width))}\r\n`

/**
 * The CSV row of a submission's entry under the header of `names`: its `createdDate` (never quoted nor prefixed:
 * a timestamp), then each name's value, empty where the submission lacks the name; a name not in `names` is left
 * out.
 *
 * @since 0.2.0
 * @category encoding
 */
export const csvRows = (names: ReadonlyArray<string>): ((entry: SubmissionEntry.SubmissionEntry) => string) => {
  const positions = new Map<string, number>()
  for (let i = 0; i < names.length; i++) positions.set(names[i] as string, i)
  return (entry) => {
    const { contentJson, createdDate } = SubmissionEntry.parse(entry)
    // Stored content is a JSON object of strings (the import's rules).
    const content = JSON.parse(contentJson) as Record<string, string>
    const row = rowOf(createdDate, content, positions, true) as StoredCsvRow
    return csvLine(row.text, row.width, names.length)
  }
}

/**
 * The NDJSON line of a submission: its entry with its id first (`SubmissionEntry.withId`), and `\n`.
 *
 * @since 0.2.0
 * @category encoding
 */
export const ndjsonLine = (entry: SubmissionEntry.SubmissionEntry, id: SubmissionId): string =>
  `${SubmissionEntry.withId(id, entry)}\n`

/**
 * Each submission's line as `rows` says: its NDJSON line, or its CSV row under the header of `rows.names`
 * (which shows no id).
 *
 * @since 0.2.0
 * @category encoding
 */
export const lineOf = (
  rows: EncodedPages.ExportRows
): ((entry: SubmissionEntry.SubmissionEntry, id: SubmissionId) => string) =>
  rows.format === "ndjson" ? ndjsonLine : csvRows(rows.names)

/**
 * A page's submissions rendered as `rows` says and joined, as `EncodedPages.readExportRows` gives a page: for an
 * adapter without it, and for rows stored without their CSV row.
 *
 * @since 0.2.0
 * @category encoding
 */
export const renderEntries = (rows: EncodedPages.ExportRows, page: Pick<SubmissionPage, "entries" | "ids">): string => {
  const line = lineOf(rows)
  return page.entries.map((entry, i) => line(entry, page.ids[i] as SubmissionId)).join("")
}

// Where the writing stands between pages: the position to read after, and what each row is, known once the
// header is written (undefined before the first page).
interface Position {
  readonly after: string | undefined
  readonly rows: EncodedPages.ExportRows | undefined
}

const start: Position = { after: undefined, rows: undefined }

const ndjson: EncodedPages.ExportRows = { format: "ndjson" }

// What each row is, and what comes before the first: the CSV header, read once from the stored names.
const begin = (
  reply: ExportReply
): Effect.Effect<readonly [rows: EncodedPages.ExportRows, head: string], StorageUnavailable> =>
  reply.format === "ndjson"
    ? Effect.succeed([ndjson, ""] as const)
    : Effect.map(reply.contentNames, (names) => [{ format: "csv", names }, csvHeader(names)] as const)

// Reads one page and gives it as the next pieces of the body; no next position after the last page.
const step = (
  reply: ExportReply,
  position: Position
): Effect.Effect<readonly [pieces: Array<string | Uint8Array>, next: Position | undefined], StorageUnavailable> =>
  Effect.flatMap(
    position.rows === undefined ? begin(reply) : Effect.succeed([position.rows, ""] as const),
    ([rows, head]) =>
      Effect.map(reply.submissionPage(position.after, rows), (page) => {
        // An empty page ends the export whatever it says: the same page is never asked for twice.
        const next = page.hasMore && page.count > 0 ? { after: page.next, rows } : undefined
        return [Pieces.aroundJoined(head, page.joined, "", position.rows === undefined && next === undefined), next]
      })
  )

const body = Pieces.body(() => start, step)

/**
 * Writes the whole body through `write`, in pieces of text or of UTF-8 bytes (each page as storage gave it),
 * reading the next page only once `write` is done with the last: the transport decides how to wait for a slow
 * reader. An export of one page is one piece, `last`.
 *
 * @since 0.2.0
 * @category encoding
 */
export const writeTo = body.writeTo

/**
 * The whole body as a stream of text pieces; pages are read as the stream is pulled.
 *
 * @since 0.2.0
 * @category encoding
 */
export const encode = body.encode
