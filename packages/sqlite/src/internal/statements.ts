// The read connection's statements, prepared once per connection, and the SQL they share: the access row, the
// range of a file's submissions, and the pages joined inside SQLite (docs/performance.md#pages-joined-in-storage).
import { type EncodedPages, FileData, type FileRepository } from "@filedata/core"
import type Database from "better-sqlite3"

// A key's owner with its file's columns, null when no file has the id; the file's id is the one asked for. Read
// as an array: a row as an object costs each column's name looked up and a hidden-class transition per column,
// on every request (docs/performance.md#one-access-statement).
/** @internal */
export type AccessRow = readonly [
  owner: string,
  fileOwner: string | null,
  name: string,
  creationDate: number,
  publicAvailability: number,
  submissionCounter: number,
  visitCounter: number,
  readPoint: number
]

// A range of a file's submissions: past `(created_date, seq)`, before `until`, committed at or before the read
// point. The leading `created_date >= ?` repeats what the OR implies, but without it SQLite only seeks on
// file_id and rescans the file's earlier rows on every page. EXPLAIN QUERY PLAN: `SEARCH submissions USING
// INDEX submissions_file_created_seq (file_id=? AND created_date>? AND created_date<?)`, no
// `USE TEMP B-TREE FOR ORDER BY`.
/** @internal */
export const RANGE =
  "file_id = ? AND created_date >= ? AND (created_date > ? OR (created_date = ? AND seq > ?))" +
  " AND created_date < ? AND seq <= ?"

/** @internal */
export type RangeArguments = [
  fileId: string,
  createdDate: number,
  createdDate: number,
  createdDate: number,
  seq: number,
  until: number,
  upTo: number
]

// Rows were checked by the core's schemas when they were written, so their ids are valid as read.
/** @internal */
export const toFoundFile = (id: FileData.FileId, ownerId: string, row: AccessRow): FileRepository.FoundFile => ({
  id,
  ownerId: ownerId as FileData.UserId,
  name: row[2],
  creationDate: FileData.timestampFromEpochMillis(row[3]),
  publicAvailability: row[4] === 1,
  SubmissionCounter: row[5],
  VisitCounter: row[6],
  readPoint: String(row[7]) as FileRepository.ReadPoint
})

// The read point: the highest seq of a commit, an insert's or an erasure's (an erasure deletes rows, so the
// submissions' own highest seq can drop; its row in `submission_erasures` keeps the point where it was). Each
// is the last entry of its table's rowid tree, an instant lookup, and a reader sees only committed rows.
const READ_POINT =
  "max(coalesce((SELECT max(seq) FROM submissions), 0), coalesce((SELECT max(seq) FROM submission_erasures), 0))"

// A submission with its id first, as `SubmissionEntry.withId` writes it (the incremental read's and the NDJSON
// export's form), made inside SQLite so a joined page still brings no row to JavaScript. An id is URL-safe.
/** @internal */
export const WITH_ID = `'{"id":"' || id || '",' || substr(entry, 2)`

// A page joined inside SQLite, `LIMIT limit`, as the reply's bytes (docs/performance.md#pages-joined-in-storage):
// no row and no string reaches JavaScript. The order is the subquery's: SQLite keeps a FROM-subquery's ORDER BY
// under an aggregate other than count, min and max, and runs it as a co-routine walking the index in order. It
// does not document that, so `JoinedOrder.holds` checks the library in use before the statement is used; the
// documented aggregate ORDER BY sorts the rows again in a temporary B-tree, about twice the time. The page's last
// createdDate, for `lastSeqAt`.
// An export's page is the same statement with each row as its line (`exportRows`).
/** @internal */
export const joinedSql = (limit: string, row = "entry", separator = "','", columns = "entry") =>
  `SELECT CAST(group_concat(${row}, ${separator}) AS BLOB), count(*), max(created_date)
    FROM (SELECT ${columns}, created_date FROM submissions WHERE ${RANGE} ORDER BY created_date, seq LIMIT ${limit})`

// An export's rows joined inside SQLite from what import stored (docs/performance.md#export-rows-rendered-at-import):
// NDJSON, each entry with its id first and LF; CSV, each stored row, the empty cells it lacks under the header (the
// first argument, one comma a name, cut after the row's own cells) and CRLF.
/** @internal */
export const exportRows = (limit: string) => ({
  ndjson: joinedSql(limit, `${WITH_ID} || char(10)`, "''", "entry, id"),
  csv: joinedSql(limit, "csv || substr(?, csv_width + 1) || char(13, 10)", "''", "csv, csv_width")
})

/** @internal */
export type JoinedRow = [joined: Buffer | null, count: number, lastDate: number | null]

// A page of the change feed joined inside SQLite, `LIMIT limit`, each change as the feed's reply writes it
// (`EncodedPages.changeText`), as bytes: no row and no string reaches JavaScript. The rows are `changesOf`'s, the
// two (file_id, seq) indexes merged in seq order (no sort, however long the file), taken by the aggregate in the
// subquery's order as `joinedSql`'s are, which `JoinedOrder.changesHold` checks. The page's last seq is its `next`.
/** @internal */
export const joinedChangesSql = (limit: string) =>
  `SELECT CAST(group_concat(change, ',') AS BLOB), count(*), max(seq) FROM (
    SELECT seq, '{"type":"submission.created","id":"' || id || '",' || substr(entry, 2) AS change
      FROM submissions WHERE file_id = ? AND seq > ? AND seq <= ?
    UNION ALL SELECT seq, '{"type":"submission.erased","id":"' || submission_id || '"}'
      FROM submission_erasures WHERE file_id = ? AND seq > ? AND seq <= ?
    ORDER BY 1 LIMIT ${limit})`

/** @internal */
export type JoinedChangesRow = [joined: Buffer | null, count: number, last: number | null]

type ChangeArguments = [fileId: string, after: number, upTo: number, fileId: string, after: number, upTo: number]

/** A prepared statement as the reads use it: better-sqlite3's, named here so the type can be written out. @internal */
export interface Query<P extends Array<unknown>, R> {
  readonly get: (...params: P) => R | undefined
  readonly all: (...params: P) => Array<R>
}

type Page = [...RangeArguments, limit: number]

/** A page of a range read as rows, each as `R`: a page of `pageSize`, one of any limit. @internal */
export interface PageQueries<R> {
  readonly page: Query<RangeArguments, R>
  readonly pageOf: Query<Page, R>
}

/** A page joined inside SQLite: of the joined page size, of a limit. @internal */
export interface JoinedQueries {
  readonly pages: Query<RangeArguments, JoinedRow>
  readonly pagesOf: Query<Page, JoinedRow>
}

/** A change of the feed as read: its seq, the submission's id, its entry (null: erased). @internal */
export type ChangeRow = [seq: number, id: string, entry: string | null]

/** The connection's statements; `prepare` says what each is for. @internal */
export interface Statements {
  readonly pageSize: number
  readonly access: Query<[fileId: string, keyHash: string], AccessRow>
  readonly entries: Readonly<Record<EncodedPages.EntryForm, PageQueries<string>>>
  readonly rows: PageQueries<[entry: string, id: string]>
  readonly joined: Readonly<Record<EncodedPages.EntryForm, JoinedQueries>> | undefined
  readonly exportLines: Query<Page, JoinedRow> | undefined
  readonly exportCsv: Query<[commas: string, ...Page], JoinedRow> | undefined
  readonly lastSeqAt: Query<
    [fileId: string, createdDate: number, lowerDate: number, lowerSeq: number, upTo: number],
    number
  >
  readonly beyond: Query<RangeArguments, number>
  readonly rangeEnd: Query<RangeArguments, [createdDate: number, seq: number]>
  readonly pageEnd: Query<[...RangeArguments, offset: number], [createdDate: number, seq: number]>
  readonly contentNames: Query<[fileId: string, upTo: number], string>
  readonly file: Query<[fileId: string], AccessRow>
  readonly ping: Query<[], unknown>
  readonly changes: Query<[after: number, after: number], [fileId: string, top: number]>
  readonly changesOf: Query<[...ChangeArguments, limit: number], ChangeRow>
  readonly joinedChanges: Query<[...ChangeArguments, limit: number], JoinedChangesRow> | undefined
  readonly changesBeyond: Query<ChangeArguments, number>
}

// A range's pages as `prepare` describes them at `entries`, each row as `columns`: one value (`pluck`), or an
// array of them (`raw`).
const pageQueries = <R>(
  db: Database.Database,
  pageSize: number,
  columns: string,
  shape: "pluck" | "raw"
): PageQueries<R> => ({
  page: db
    .prepare<RangeArguments, R>(
      `SELECT ${columns} FROM submissions WHERE ${RANGE} ORDER BY created_date, seq LIMIT ${pageSize}`
    )
    [shape](),
  pageOf: db
    .prepare<Page, R>(`SELECT ${columns} FROM submissions WHERE ${RANGE} ORDER BY created_date, seq LIMIT ?`)
    [shape]()
})

// A page joined inside SQLite (`joinedSql`), each row as `row` made from `columns`.
const joinedQueries = (db: Database.Database, pageSize: number, row: string, columns: string): JoinedQueries => ({
  pages: db.prepare<RangeArguments, JoinedRow>(joinedSql(String(joinedPageSize(pageSize)), row, "','", columns)).raw(),
  pagesOf: db.prepare<Page, JoinedRow>(joinedSql("?", row, "','", columns)).raw()
})

// Whether the file's text is UTF-8, as a BLOB cast of a joined page then is.
const isUtf8 = (db: Database.Database): boolean => db.pragma("encoding", { simple: true }) === "UTF-8"

// The connection's statements, prepared once per connection; `joins` says which joined statements the library is
// known to keep in order (`JoinedOrder`).
/** @internal */
export const prepare = (
  db: Database.Database,
  pageSize: number,
  joins: { readonly pages: boolean; readonly changes: boolean }
): Statements => ({
  pageSize,
  // The key's row first, so an unknown or revoked key never reaches `files`; no row when the key matches
  // no active key, the file's columns null when no file has the id. The read point in the same statement
  // as the file's row: the highest seq is the last entry of the table's rowid tree, an instant lookup,
  // and a reader sees only committed rows.
  access: db
    .prepare<[fileId: string, keyHash: string], AccessRow>(
      `SELECT k.user_id, f.user_id, f.name, f.creation_date, f.public_availability,
          f.submission_counter, f.visit_counter, ${READ_POINT}
          FROM api_keys k LEFT JOIN files f ON f.id = ?
          WHERE k.key_hash = ? AND k.revoked_at IS NULL`
    )
    .raw(),
  // Keyset paging: each page seeks past the last row of the previous one, so a page costs the same at
  // the end of a million rows as at the start. Only the entries are read: measured, the two numbers of
  // every row cost a quarter of the page. Where the page ends is looked up on its own, from the index
  // (docs/performance.md#stored-reply-entries). The page size's limit is a constant: SQLite plans with the
  // value bound to a `LIMIT ?`, so prepares the statement again at every run
  // (docs/performance.md#pages-not-a-stream). Each entry as stored (the File reply's), or with its id first (the
  // incremental read's), so neither reads a column more.
  entries: {
    stored: pageQueries(db, pageSize, "entry", "pluck"),
    withId: pageQueries(db, pageSize, WITH_ID, "pluck")
  },
  // The same pages as entries and ids, for `readSubmissions`, whose page carries both.
  rows: pageQueries(db, pageSize, "entry, id", "raw"),
  // The same page joined by SQLite (`joinedSql`) as bytes, when it is known to keep reply order and the file's
  // text is UTF-8, as a BLOB cast of it then is.
  ...(joins.pages && isUtf8(db)
    ? {
        joined: {
          stored: joinedQueries(db, pageSize, "entry", "entry"),
          withId: joinedQueries(db, pageSize, WITH_ID, "entry, id")
        },
        // The limit bound: an export reads a first page of `pageSize` and longer ones after it, as a reply does,
        // and the statement planned again per page costs nothing beside a page of thousands of rows.
        exportLines: db.prepare<[...RangeArguments, limit: number], JoinedRow>(exportRows("?").ndjson).raw(),
        exportCsv: db.prepare<[commas: string, ...RangeArguments, limit: number], JoinedRow>(exportRows("?").csv).raw()
      }
    : { joined: undefined, exportLines: undefined, exportCsv: undefined }),
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
          f.submission_counter, f.visit_counter, ${READ_POINT}
          FROM files f WHERE f.id = ?`
    )
    .raw(),
  // Reads a table, so it takes the same lock and needs the same schema as a request; `SELECT 1` would
  // answer without touching the file.
  ping: db.prepare("SELECT 1 FROM files LIMIT 1").pluck(),
  // What waiting requests wake on: the files with rows or erasures past a seq (the seq given twice), by a range
  // of each rowid tree, so a poll with nothing new is two seeks and one with new rows reads only those.
  changes: db
    .prepare<[after: number, after: number], [fileId: string, top: number]>(
      `SELECT file_id, max(seq) FROM (SELECT file_id, seq FROM submissions WHERE seq > ?
          UNION ALL SELECT file_id, seq FROM submission_erasures WHERE seq > ?) GROUP BY file_id`
    )
    .raw(),
  // A page of the file's change feed (docs/architecture.md#the-change-feed): its stored submissions and its
  // erasures past a seq, up to the read point, merged in seq order from the two (file_id, seq) indexes, each
  // walked in order as far as the page needs; no sort, however long the file. EXPLAIN QUERY PLAN: `MERGE
  // (UNION ALL)` of two `SEARCH ... USING INDEX ..._file_seq (file_id=? AND seq>? AND seq<?)`.
  changesOf: db
    .prepare<[...ChangeArguments, limit: number], ChangeRow>(
      `SELECT seq, id, entry FROM submissions WHERE file_id = ? AND seq > ? AND seq <= ?
        UNION ALL SELECT seq, submission_id, NULL FROM submission_erasures WHERE file_id = ? AND seq > ? AND seq <= ?
        ORDER BY 1 LIMIT ?`
    )
    .raw(),
  // The same page joined by SQLite (`joinedChangesSql`) as bytes, under the conditions of `joined`; the limit
  // bound, planned again per page at no cost beside a page of hundreds of rows.
  joinedChanges:
    joins.changes && isUtf8(db)
      ? db.prepare<[...ChangeArguments, limit: number], JoinedChangesRow>(joinedChangesSql("?")).raw()
      : undefined,
  // Whether the feed holds a change past a seq, for a joined page as long as its limit: two seeks.
  changesBeyond: db
    .prepare<ChangeArguments, number>(
      `SELECT 1 FROM submissions WHERE file_id = ? AND seq > ? AND seq <= ?
        UNION ALL SELECT 1 FROM submission_erasures WHERE file_id = ? AND seq > ? AND seq <= ? LIMIT 1`
    )
    .pluck()
})

// How many submissions a joined page after a range's first reads when no limit is given: four pages of rows.
// Joined pages hold no strings, and a whole file's reply measured fastest with pages of about 4,000 submissions
// (docs/performance.md#pages-joined-in-storage).
/** @internal */
export const joinedPageSize = (pageSize: number): number => 4 * pageSize
