/**
 * The `FileRepository` port on its own read connection to the SQLite file.
 *
 * Reads bypass the @effect/sql client and its per-statement machinery (a prepared-statement cache behind
 * an Effect `Cache`, a semaphore and a span per statement): docs/performance.md#sqlite-reads-on-their-own-connection.
 * Statements here are prepared once and run synchronously, so a request that needs no I/O wait runs
 * without yielding. Writes (import, keys) and migrations stay on the @effect/sql client; in WAL
 * mode this reader never waits for them and always sees committed data.
 *
 * The connection follows the file at its path (`internal/followedFile.ts`): when the file is deleted,
 * replaced, changed in place or unreadable, or a read fails, reads fail as `StorageUnavailable` and the
 * connection is opened again, its statements prepared again, once the path holds a usable database. The
 * check costs one `stat` per millisecond at most, whatever the request rate.
 *
 * A whole file's reply reads its pages after the first joined inside SQLite, as bytes
 * (docs/performance.md#pages-joined-in-storage), once `internal/joinedOrder.ts` has found that the SQLite in use
 * keeps the order this relies on.
 *
 * Reads share one read transaction for up to a millisecond, so SQLite takes and releases its locks about
 * once per millisecond instead of once per statement; the reads of one turn of the event loop always share
 * one, so a request's access and its first page come from one snapshot. A commit made on another connection
 * is seen by the first turn that starts a millisecond after the snapshot began; the storage layer ends the
 * snapshot around its own writes (`aroundWrite`), so those are seen at once.
 *
 * @since 0.1.0
 */
import {
  FileData,
  type FileDataError,
  FileRepository,
  SubmissionEntry,
  type SubmissionSignals,
  SubmissionsExport
} from "@filedata/core"
import { KeyHash, SubmissionPosition } from "@filedata/sql"
import type Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as JoinedOrder from "./internal/joinedOrder.js"
import * as ReadConnection from "./internal/readConnection.js"

/**
 * How many submissions one page reads when no size is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPageSize = 1000

// A key's owner with its file's columns, null when no file has the id; the file's id is the one asked for. Read
// as an array: a row as an object costs each column's name looked up and a hidden-class transition per column,
// on every request (docs/performance.md#one-access-statement).
type AccessRow = readonly [
  owner: string,
  fileOwner: string | null,
  name: string,
  creationDate: number,
  publicAvailability: number,
  submissionCounter: number,
  visitCounter: number,
  readPoint: number | null
]

// A range of a file's submissions: past `(created_date, seq)`, before `until`, committed at or before the read
// point. The leading `created_date >= ?` repeats what the OR implies, but without it SQLite only seeks on
// file_id and rescans the file's earlier rows on every page. EXPLAIN QUERY PLAN: `SEARCH submissions USING
// INDEX submissions_file_created_seq (file_id=? AND created_date>? AND created_date<?)`, no
// `USE TEMP B-TREE FOR ORDER BY`.
const RANGE =
  "file_id = ? AND created_date >= ? AND (created_date > ? OR (created_date = ? AND seq > ?))" +
  " AND created_date < ? AND seq <= ?"

type RangeArguments = [
  fileId: string,
  createdDate: number,
  createdDate: number,
  createdDate: number,
  seq: number,
  until: number,
  upTo: number
]

// Rows were checked by the core's schemas when they were written, so their ids are valid as read.
const toFoundFile = (id: FileData.FileId, ownerId: string, row: AccessRow): FileRepository.FoundFile => ({
  id,
  ownerId: ownerId as FileData.UserId,
  name: row[2],
  creationDate: FileData.timestampFromEpochMillis(row[3]),
  publicAvailability: row[4] === 1,
  SubmissionCounter: row[5],
  VisitCounter: row[6],
  readPoint: String(row[7] ?? 0) as FileRepository.ReadPoint
})

// A page joined inside SQLite, `LIMIT limit`, as the reply's bytes (docs/performance.md#pages-joined-in-storage):
// no row and no string reaches JavaScript. The order is the subquery's: SQLite keeps a FROM-subquery's ORDER BY
// under an aggregate other than count, min and max, and runs it as a co-routine walking the index in order. It
// does not document that, so `JoinedOrder.holds` checks the library in use before the statement is used; the
// documented aggregate ORDER BY sorts the rows again in a temporary B-tree, about twice the time. The page's last
// createdDate, for `lastSeqAt`. group_concat skips a row without an entry: a file that has any is read as rows
// (`withoutEntry`).
// An export's page is the same statement with each row as its line (`exportRows`).
const joinedSql = (limit: string, row = "entry", separator = "','", columns = "entry") =>
  `SELECT CAST(group_concat(${row}, ${separator}) AS BLOB), count(*), max(created_date)
    FROM (SELECT ${columns}, created_date FROM submissions WHERE ${RANGE} ORDER BY created_date, seq LIMIT ${limit})`

// An export's rows joined inside SQLite from what import stored (docs/performance.md#export-rows-rendered-at-import):
// NDJSON, each entry and LF; CSV, each stored row, the empty cells it lacks under the header (the first argument,
// one comma a name, cut after the row's own cells) and CRLF.
const exportRows = (limit: string) => ({
  ndjson: joinedSql(limit, "entry || char(10)", "''"),
  csv: joinedSql(limit, "csv || substr(?, csv_width + 1) || char(13, 10)", "''", "csv, csv_width")
})

type JoinedRow = [joined: Buffer | null, count: number, lastDate: number | null]

// The connection's statements, prepared once per connection.
const prepare = (db: Database.Database, pageSize: number, joins: boolean) => ({
  pageSize,
  // The key's row first, so an unknown or revoked key never reaches `files`; no row when the key matches
  // no active key, the file's columns null when no file has the id. The read point in the same statement
  // as the file's row: the highest seq is the last entry of the table's rowid tree, an instant lookup,
  // and a reader sees only committed rows.
  access: db
    .prepare<[fileId: string, keyHash: string], AccessRow>(
      `SELECT k.user_id, f.user_id, f.name, f.creation_date, f.public_availability,
          f.submission_counter, f.visit_counter, (SELECT max(seq) FROM submissions)
          FROM api_keys k LEFT JOIN files f ON f.id = ?
          WHERE k.key_hash = ? AND k.revoked_at IS NULL`
    )
    .raw(),
  // Keyset paging: each page seeks past the last row of the previous one, so a page costs the same at
  // the end of a million rows as at the start. Only the entries are read: measured, the two numbers of
  // every row cost a quarter of the page. Where the page ends is looked up on its own, from the index
  // (docs/performance.md#stored-reply-entries). The page size's limit is a constant: SQLite plans with the
  // value bound to a `LIMIT ?`, so prepares the statement again at every run
  // (docs/performance.md#pages-not-a-stream).
  page: db
    .prepare<RangeArguments, string | null>(
      `SELECT entry FROM submissions WHERE ${RANGE} ORDER BY created_date, seq LIMIT ${pageSize}`
    )
    .pluck(),
  // A range's first page when nothing bounds it but the read point, as a whole file's reply reads it: two
  // arguments and two conditions where the range has seven and six, about a tenth of the page's time in
  // isolation (docs/performance.md#first-page-of-a-whole-file).
  firstPage: db
    .prepare<[fileId: string, upTo: number], string | null>(
      `SELECT entry FROM submissions WHERE file_id = ? AND seq <= ? ORDER BY created_date, seq LIMIT ${pageSize}`
    )
    .pluck(),
  pageOf: db
    .prepare<[...RangeArguments, limit: number], string | null>(
      `SELECT entry FROM submissions WHERE ${RANGE} ORDER BY created_date, seq LIMIT ?`
    )
    .pluck(),
  // The same page with what an entry is made of, for rows an instance of the previous release imported
  // during a rolling upgrade: they have no entry yet (SqliteMigrations).
  pageParts: db
    .prepare<[...RangeArguments, limit: number], [entry: string | null, createdDate: number, content: string]>(
      `SELECT entry, created_date, content FROM submissions WHERE ${RANGE} ORDER BY created_date, seq LIMIT ?`
    )
    .raw(),
  // The same page joined by SQLite (`joinedSql`) as bytes, when it is known to keep reply order and the file's
  // text is UTF-8, as a BLOB cast of it then is.
  ...(joins && db.pragma("encoding", { simple: true }) === "UTF-8"
    ? {
        joined: db.prepare<RangeArguments, JoinedRow>(joinedSql(String(joinedPageSize(pageSize)))).raw(),
        joinedOf: db.prepare<[...RangeArguments, limit: number], JoinedRow>(joinedSql("?")).raw(),
        // The limit bound: an export reads a first page of `pageSize` and longer ones after it, as a reply does,
        // and the statement planned again per page costs nothing beside a page of thousands of rows.
        exportLines: db.prepare<[...RangeArguments, limit: number], JoinedRow>(exportRows("?").ndjson).raw(),
        exportCsv: db.prepare<[commas: string, ...RangeArguments, limit: number], JoinedRow>(exportRows("?").csv).raw()
      }
    : { joined: undefined, joinedOf: undefined, exportLines: undefined, exportCsv: undefined }),
  // Whether the file has a submission without a CSV row up to the read point, as `withoutEntry` (SqliteMigrations).
  withoutCsv: db
    .prepare<[fileId: string, upTo: number], number>(
      "SELECT 1 FROM submissions WHERE file_id = ? AND csv IS NULL AND seq <= ? LIMIT 1"
    )
    .pluck(),
  // Whether the file has a submission without an entry up to the read point, from the partial index that holds
  // only those (SqliteMigrations): a seek, where counting entries in the joined statement cost each of its rows
  // (docs/performance.md#pages-joined-in-storage).
  withoutEntry: db
    .prepare<[fileId: string, upTo: number], number>(
      "SELECT 1 FROM submissions WHERE file_id = ? AND entry IS NULL AND seq <= ? LIMIT 1"
    )
    .pluck(),
  // The range's submissions at one createdDate, at most two: where that createdDate is the last of a full page
  // and only one submission of the range has it, that one ends the page, found by a seek instead of `pageEnd`'s
  // walk of the page (docs/performance.md#pages-joined-in-storage).
  lastSeqAt: db
    .prepare<[fileId: string, createdDate: number, lowerDate: number, lowerSeq: number, upTo: number], number>(
      `SELECT seq FROM submissions WHERE file_id = ? AND created_date = ? AND (created_date > ? OR seq > ?)
          AND seq <= ? ORDER BY seq LIMIT 2`
    )
    .pluck(),
  // Whether the range holds anything past a position.
  beyond: db.prepare<RangeArguments, number>(`SELECT 1 FROM submissions WHERE ${RANGE} LIMIT 1`).pluck(),
  // A page shorter than its limit holds the rest of the range: it ends where the range does. Looked up only
  // when asked for: a reply of the whole file, most requests, does not need it.
  rangeEnd: db
    .prepare<RangeArguments, [createdDate: number, seq: number]>(
      `SELECT created_date, seq FROM submissions WHERE ${RANGE}
          ORDER BY created_date DESC, seq DESC LIMIT 1`
    )
    .raw(),
  // A full page's last row and the one after it, if any: where it ends, and whether more match.
  pageEnd: db
    .prepare<[...RangeArguments, offset: number], [createdDate: number, seq: number]>(
      `SELECT created_date, seq FROM submissions WHERE ${RANGE}
          ORDER BY created_date, seq LIMIT 2 OFFSET ?`
    )
    .raw(),
  // The file's content names up to the read point, in order (SqliteMigrations), by the primary key.
  contentNames: db
    .prepare<[fileId: string, upTo: number], string>(
      "SELECT name FROM content_names WHERE file_id = ? AND seq <= ? ORDER BY position"
    )
    .pluck(),
  // A file by its id alone with the read point, as `access` reads them, for operators.
  file: db
    .prepare<[fileId: string], AccessRow>(
      `SELECT f.user_id, f.user_id, f.name, f.creation_date, f.public_availability,
          f.submission_counter, f.visit_counter, (SELECT max(seq) FROM submissions)
          FROM files f WHERE f.id = ?`
    )
    .raw(),
  // Reads a table, so it takes the same lock and needs the same schema as a request; `SELECT 1` would
  // answer without touching the file.
  ping: db.prepare("SELECT 1 FROM files LIMIT 1").pluck(),
  // What waiting requests wake on: the files with rows past a seq, by a range of the rowid tree, so a poll
  // with nothing new is one seek and one with new rows reads only those.
  changes: db
    .prepare<[after: number], [fileId: string, top: number]>(
      "SELECT file_id, max(seq) FROM submissions WHERE seq > ? GROUP BY file_id"
    )
    .raw()
})

type Statements = ReturnType<typeof prepare>

// A range's start and the arguments of its statements; undefined for a position no adapter makes.
const spanOf = (
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

type PageEnd =
  | { readonly next: string; readonly hasMore: true }
  | { readonly next: string | undefined; readonly hasMore: false }

// Where a page of `count` rows read with `limit` ends and whether more match. The statements run in the turn's
// one read transaction, so they see the rows the page was read from.
const ending = (
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
const endingAt = (statements: Statements, bounds: RangeArguments, lastDate: number): PageEnd | undefined => {
  const [fileId, lowerDate, , , lowerSeq, until, upTo] = bounds
  const seqs = statements.lastSeqAt.all(fileId, lastDate, lowerDate, lowerSeq, upTo)
  if (seqs.length !== 1) return undefined
  const seq = seqs[0] as number
  const next = `${lastDate}:${seq}`
  return statements.beyond.get(fileId, lastDate, lastDate, lastDate, seq, until, upTo) === undefined
    ? { next, hasMore: false }
    : { next, hasMore: true }
}

// Whether a range is bounded by nothing but the read point.
const isWhole = (range: FileRepository.SubmissionRange): boolean =>
  range.after === undefined && range.since === undefined && range.until === undefined

// A page's entries as rows.
const entriesOf = (
  statements: Statements,
  bounds: RangeArguments,
  limit: number,
  whole: boolean
): ReadonlyArray<SubmissionEntry.SubmissionEntry> => {
  const stored =
    limit !== statements.pageSize
      ? statements.pageOf.all(...bounds, limit)
      : whole
        ? statements.firstPage.all(bounds[0], bounds[6])
        : statements.page.all(...bounds)
  return stored.includes(null)
    ? pageParts(statements, bounds, limit)
    : (stored as Array<SubmissionEntry.SubmissionEntry>)
}

// A page with what an entry is made of, for rows without one.
const pageParts = (
  statements: Statements,
  bounds: RangeArguments,
  limit: number
): Array<SubmissionEntry.SubmissionEntry> =>
  statements.pageParts
    .all(...bounds, limit)
    .map(([entry, createdDate, content]) => SubmissionEntry.fromColumns(entry, createdDate, content))

// How many submissions a joined page after a range's first reads when no limit is given: four pages of rows.
// Joined pages hold no strings, and a whole file's reply measured fastest with pages of about 4,000 submissions
// (docs/performance.md#pages-joined-in-storage).
const joinedPageSize = (pageSize: number): number => 4 * pageSize

/**
 * The port, plus what the storage layer needs to keep its own writes visible to the next read.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteFileRepository extends FileRepository.FileRepository {
  /** Joins each page inside SQLite from the rows import stored (docs/performance.md#export-rows-rendered-at-import). */
  readonly readExportPage: NonNullable<FileRepository.FileRepository["readExportPage"]>
  /** Joins each page inside SQLite (docs/performance.md#pages-joined-in-storage). */
  readonly readJoinedSubmissions: (
    fileId: FileData.FileId,
    range: FileRepository.SubmissionRange
  ) => Effect.Effect<FileRepository.JoinedPage, FileDataError.StorageUnavailable>
  /**
   * Ends the snapshot the reads of the current turn of the event loop share (see `make`), so the next
   * read sees every commit made so far, and a write on another connection of this process never waits
   * for it.
   */
  readonly endSnapshot: () => void
  /**
   * Runs a write made on another connection of this process with the snapshot ended before it (in
   * rollback-journal mode the reader's lock would hold it up) and after it (so the next read sees it).
   */
  readonly aroundWrite: <A, E, R>(write: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The files with submissions committed past a read point's seq, and the highest seq among them. */
  readonly changesAfter: (
    position: number
  ) => Effect.Effect<SubmissionSignals.Changes, FileDataError.StorageUnavailable>
}

/**
 * Opens a read connection to `filename` (an existing, migrated database) and prepares its statements;
 * the connection follows the file until the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly filename: string
  readonly pageSize: number
}): Effect.Effect<SqliteFileRepository, FileDataError.StorageUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const { pageSize } = options
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      return yield* Effect.dieMessage(`pageSize must be a positive integer, got ${pageSize}`)
    }
    const joins = JoinedOrder.holds(joinedSql)
    const connection = yield* ReadConnection.make({
      filename: options.filename,
      prepare: (db) => prepare(db, pageSize, joins)
    })
    const { read } = connection

    return {
      findAccess: (apiKey, fileId) =>
        read((statements) => {
          const row = statements.access.get(fileId, KeyHash.hashKey(apiKey))
          if (row === undefined) return FileRepository.noAccess
          const [owner, fileOwner] = row
          return {
            owner: Option.some(owner as FileData.UserId),
            file: fileOwner === null ? Option.none() : Option.some(toFoundFile(fileId, fileOwner, row))
          }
        }),
      readSubmissions: (fileId, range) =>
        read((statements) => {
          const span = spanOf(fileId, range)
          // A position no adapter makes names no submission.
          if (span === undefined) return { entries: [], next: range.after, hasMore: false }
          const bounds = span[1]
          const limit = range.limit ?? pageSize
          const entries = entriesOf(statements, bounds, limit, isWhole(range))
          return { entries, ...ending(statements, span, range, entries.length, limit) }
        }),
      readJoinedSubmissions: (fileId, range) =>
        read((statements) => {
          const span = spanOf(fileId, range)
          if (span === undefined) return { joined: "", count: 0, next: range.after, hasMore: false }
          const bounds = span[1]
          const { joined: joinedStatement, joinedOf } = statements
          // A range's first page as rows joined here: it is most often a whole reply of a few submissions, which
          // measured faster that way (docs/performance.md#pages-joined-in-storage).
          if (joinedStatement === undefined || joinedOf === undefined || range.after === undefined) {
            const limit = range.limit ?? pageSize
            const entries = entriesOf(statements, bounds, limit, isWhole(range))
            return FileRepository.join({ entries, ...ending(statements, span, range, entries.length, limit) })
          }
          const limit = range.limit ?? joinedPageSize(pageSize)
          if (statements.withoutEntry.get(bounds[0], bounds[6]) !== undefined) {
            const entries = pageParts(statements, bounds, limit)
            return FileRepository.join({ entries, ...ending(statements, span, range, entries.length, limit) })
          }
          const [stored, count, lastDate] = (
            range.limit === undefined ? joinedStatement.get(...bounds) : joinedOf.get(...bounds, limit)
          ) as JoinedRow
          const end =
            (count === limit && lastDate !== null && endingAt(statements, bounds, lastDate)) ||
            ending(statements, span, range, count, limit)
          return { joined: stored ?? "", count, ...end }
        }),
      // Joined inside SQLite from the rows import stored, a first page of `pageSize` and the reply's longer pages
      // after it; a file with rows stored without them read as rows and rendered here.
      readExportPage: (fileId, range, rows) =>
        read((statements) => {
          const span = spanOf(fileId, range)
          if (span === undefined) return { joined: "", count: 0, next: range.after, hasMore: false }
          const bounds = span[1]
          const limit = range.limit ?? (range.after === undefined ? pageSize : joinedPageSize(pageSize))
          const csv = rows.format === "csv"
          const missing = csv ? statements.withoutCsv : statements.withoutEntry
          if (
            statements.exportCsv === undefined ||
            statements.exportLines === undefined ||
            missing.get(bounds[0], bounds[6]) !== undefined
          ) {
            const entries = pageParts(statements, bounds, limit)
            const end = ending(statements, span, range, entries.length, limit)
            return SubmissionsExport.renderPage(rows, { entries, ...end })
          }
          const [stored, count, lastDate] = (
            csv
              ? statements.exportCsv.get(",".repeat(rows.names.length), ...bounds, limit)
              : statements.exportLines.get(...bounds, limit)
          ) as JoinedRow
          const end =
            (count === limit && lastDate !== null && endingAt(statements, bounds, lastDate)) ||
            ending(statements, span, range, count, limit)
          return { joined: stored ?? "", count, ...end }
        }),
      readContentNames: (fileId, upTo) => read((statements) => statements.contentNames.all(fileId, Number(upTo))),
      findFile: (fileId) =>
        read((statements) => {
          const row = statements.file.get(fileId)
          return row === undefined ? Option.none() : Option.some(toFoundFile(fileId, row[1] as string, row))
        }),
      // Health checks look at the path now, however recently a request did.
      ping: Effect.asVoid(connection.readChecked((statements) => statements.ping.get())),
      endSnapshot: connection.endSnapshot,
      aroundWrite: connection.aroundWrite,
      changesAfter: (position) =>
        read((statements) => {
          const files: Array<FileData.FileId> = []
          let top: number | undefined
          for (const [fileId, seq] of statements.changes.all(position)) {
            files.push(fileId as FileData.FileId)
            if (top === undefined || seq > top) top = seq
          }
          return { files, top }
        })
    }
  })
