// Where a page of a file's submissions starts and ends: the range's statement arguments, the page's end and
// whether more match (keyset paging: docs/performance.md#stored-reply-entries), and a page read as rows.
import type { FileRepository, SubmissionEntry, SubmissionId } from "@filedata/core"
import { SubmissionPosition } from "@filedata/sql"
import type { PageQueries, RangeArguments, Statements } from "./statements.js"

// A range's start and the arguments of its statements; undefined for a position no adapter makes.
/** @internal */
export const spanOf = (
  fileId: string,
  range: FileRepository.SubmissionRange
): readonly [start: SubmissionPosition.Position, bounds: RangeArguments] | undefined => {
  const after = range.after === undefined ? undefined : SubmissionPosition.parse(range.after)
  if (range.after !== undefined && after === undefined) return undefined
  const lower = SubmissionPosition.lowerBound(after, range.since)
  return [
    lower,
    [
      fileId,
      lower.createdDate,
      lower.createdDate,
      lower.createdDate,
      Number(lower.seq),
      range.until ?? Number.MAX_SAFE_INTEGER,
      range.upTo === undefined ? Number.MAX_SAFE_INTEGER : Number(range.upTo)
    ]
  ]
}

/** @internal */
export type PageEnd =
  | { readonly next: string; readonly hasMore: true }
  | { readonly next: string | undefined; readonly hasMore: false }

// Where a page of `count` rows read with `limit` ends and whether more match. The statements run in the turn's
// one read transaction, so they see the rows the page was read from.
/** @internal */
export const ending = (
  statements: Statements,
  [start, bounds]: readonly [SubmissionPosition.Position, RangeArguments],
  range: FileRepository.SubmissionRange,
  count: number,
  limit: number
): PageEnd => {
  if (count === 0) return { next: range.after ?? SubmissionPosition.format(start), hasMore: false }
  if (count < limit) {
    if (range.endPosition === false) return { next: undefined, hasMore: false }
    const [endDate, endSeq] = statements.rangeEnd.get(...bounds) as [number, number]
    return { next: `${endDate}:${endSeq}`, hasMore: false }
  }
  const [last, beyond] = statements.pageEnd.all(...bounds, limit - 1)
  const [endDate, endSeq] = last as [number, number]
  const next = `${endDate}:${endSeq}`
  return beyond === undefined ? { next, hasMore: false } : { next, hasMore: true }
}

// Where a full page whose last createdDate is `lastDate` ends, when one submission of the range has that
// createdDate; undefined when more do (the page may end among them: `ending` walks it).
/** @internal */
export const endingAt = (statements: Statements, bounds: RangeArguments, lastDate: number): PageEnd | undefined => {
  const [fileId, lowerDate, , , lowerSeq, until, upTo] = bounds
  const seqs = statements.lastSeqAt.all(fileId, lastDate, lowerDate, lowerSeq, upTo)
  if (seqs.length !== 1) return undefined
  const seq = seqs[0] as number
  const next = `${lastDate}:${seq}`
  return statements.beyond.get(fileId, lastDate, lastDate, lastDate, seq, until, upTo) === undefined
    ? { next, hasMore: false }
    : { next, hasMore: true }
}

// A page of a range read as rows by `queries` (`Statements.entries`, `Statements.rows`).
/** @internal */
export const rowsOf = <R>(
  statements: Statements,
  queries: PageQueries<R>,
  bounds: RangeArguments,
  limit: number
): Array<R> => (limit !== statements.pageSize ? queries.pageOf.all(...bounds, limit) : queries.page.all(...bounds))

// A page as `readSubmissions` gives it: its entries, each as the reply writes it (made by `SubmissionEntry` when
// it was written), and their ids (made by `SubmissionId`).
/** @internal */
export const entriesAndIds = (
  statements: Statements,
  bounds: RangeArguments,
  limit: number
): {
  readonly entries: ReadonlyArray<SubmissionEntry.SubmissionEntry>
  readonly ids: ReadonlyArray<SubmissionId.SubmissionId>
} => {
  const rows = rowsOf(statements, statements.rows, bounds, limit)
  const entries: Array<SubmissionEntry.SubmissionEntry> = new Array(rows.length)
  const ids: Array<SubmissionId.SubmissionId> = new Array(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const [entry, id] = rows[i] as [string, string]
    entries[i] = entry as SubmissionEntry.SubmissionEntry
    ids[i] = id as SubmissionId.SubmissionId
  }
  return { entries, ids }
}
