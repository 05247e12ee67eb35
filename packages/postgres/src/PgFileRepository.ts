/**
 * The `FileRepository` port over an @effect/sql PostgreSQL client.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import type { FileDataError } from "@filedata/core"
import {
  type EncodedPages,
  FileData,
  FileRepository,
  SubmissionEntry,
  SubmissionId,
  type SubmissionSignals
} from "@filedata/core"
import { ChangeRows, JoinedText, KeyHash, StorageFailure, SubmissionPosition } from "@filedata/sql"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Pg from "pg"
import { epochMillis, instant, lostConnection } from "./internal/storage.js"

/**
 * How many submissions one page reads when no size is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPageSize = 1000

// pg hands int8 over as text; every value here is a safe integer, so Number is exact.
interface FileRow {
  readonly id: string
  readonly user_id: string
  readonly name: string
  readonly creation_date: string
  readonly public_availability: boolean
  readonly submission_counter: string
  readonly visit_counter: string
  readonly read_point: string
}

// A key's row with its file's columns, null when no file has the id, and the first page of a file the key
// owns: its first rows up to one past a page, joined, and how many they are.
type AccessRow = {
  readonly owner: string
  readonly joined: string | null
  readonly count: string | null
} & (FileRow | { readonly [Column in Exclude<keyof FileRow, "read_point">]: null })

// How many first pages read with their access wait for the reply that reads them, and how much of their text
// at most; a request that never does (an incremental read, an export, a dropped connection) leaves its page to be
// pushed out by later ones, so what waits stays a few MiB whatever the traffic.
const prefetchedCapacity = 1024
const prefetchedChars = 4 * 1024 * 1024

// entry is the submission as the reply writes it, id its id.
interface SubmissionRow {
  readonly seq: string
  readonly created_date: string
  readonly id: string
  readonly entry: string
}

// A page's rows each as one text made by PostgreSQL: the entry as stored or with its id first, or an export's line.
interface TextRow {
  readonly seq: string
  readonly created_date: string
  readonly text: string
}

// Rows were checked by the core's schemas when they were written, so their ids are valid as read.
const toFoundFile = (row: FileRow): FileRepository.FoundFile => ({
  id: row.id as FileData.FileId,
  ownerId: row.user_id as FileData.UserId,
  name: row.name,
  creationDate: FileData.timestampFromEpochMillis(Number(row.creation_date)),
  publicAvailability: row.public_availability,
  SubmissionCounter: Number(row.submission_counter),
  VisitCounter: Number(row.visit_counter),
  readPoint: row.read_point as FileRepository.ReadPoint
})

/**
 * The repository, and what the signals of waiting requests read.
 *
 * @since 0.2.0
 * @category models
 */
export interface PgFileRepository extends FileRepository.FileRepository {
  /** The files with submissions stored or erased past a read point's seq, and the highest seq among them. */
  readonly changesAfter: (
    position: number
  ) => Effect.Effect<SubmissionSignals.Changes, FileDataError.StorageUnavailable>
}

/**
 * Builds the repository reading submissions in pages of `pageSize` rows.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: {
  readonly pageSize: number
  /**
   * The pool under the `SqlClient`, for the one statement each request makes, which then runs prepared.
   *
   * @since 0.2.0
   */
  readonly pool?: Pg.Pool | undefined
}): Effect.Effect<PgFileRepository, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const { pageSize } = options
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      return yield* Effect.dieMessage(`pageSize must be a positive integer, got ${pageSize}`)
    }
    const sql = yield* SqlClient.SqlClient

    // A pooled connection the server has ended (a restart, a failover, pg_terminate_backend) fails the
    // statement that meets it, and the same read on a fresh connection answers. Two more attempts, not one:
    // the driver hands a connection ended by the server back to the pool, which gives it out again until
    // its socket closes a moment later, so the first may meet it again (it never runs there); after that
    // the pool has dropped it. Reads only: a write that failed this way may or may not have committed.
    const read = <A>(statement: Effect.Effect<A, SqlError>): Effect.Effect<A, FileDataError.StorageUnavailable> =>
      statement.pipe(Effect.retry({ times: 2, while: lostConnection }), Effect.mapError(StorageFailure.unavailable))

    // A submission with its id first, as `SubmissionEntry.withId` writes it (the incremental read's and the NDJSON
    // export's form), made by PostgreSQL in the page's statement. An id is URL-safe.
    const withId = sql`'{"id":"' || id || '",' || substr(entry, 2)`

    // Where a range's read starts, or undefined for a position no adapter makes, which names no submission.
    const lowerOf = (range: FileRepository.SubmissionRange): SubmissionPosition.Position | undefined => {
      const after = range.after === undefined ? undefined : SubmissionPosition.parse(range.after)
      return range.after !== undefined && after === undefined
        ? undefined
        : SubmissionPosition.lowerBound(after, range.since)
    }
    const nextOf = (
      range: FileRepository.SubmissionRange,
      lower: SubmissionPosition.Position,
      last: { readonly seq: string; readonly created_date: string } | undefined
    ) =>
      last === undefined
        ? (range.after ?? SubmissionPosition.format(lower))
        : SubmissionPosition.format({ createdDate: Number(last.created_date), seq: last.seq })

    // Keyset paging: each page seeks past the last row of the previous one with a row comparison, which
    // PostgreSQL answers from the index (file_id, created_date, seq) in order, so no page sorts and the
    // last page of a million rows costs what the first does. One row more than asked says whether more match.
    // The rows of a page, each as `columns` and its position. ORDER BY names the table's columns: a bare
    // `created_date` is the output column of that name, epoch milliseconds, which no index serves, and PostgreSQL
    // then scanned and sorted the file for each page (55 ms a page of 1,000 at 100,000 submissions, 0.7 ms now).
    const rowsOf = <Row extends object>(
      columns: Statement.Fragment,
      fileId: FileData.FileId,
      lower: SubmissionPosition.Position,
      range: FileRepository.SubmissionRange,
      limit: number
    ) =>
      sql<Row>`SELECT seq, ${epochMillis(sql, "created_date")} AS created_date, ${columns}
        FROM submissions
        WHERE file_id = ${fileId} AND (created_date, seq) > (${instant(sql, lower.createdDate)}, ${lower.seq}::int8)${
          range.until === undefined ? sql`` : sql` AND created_date < ${instant(sql, range.until)}`
        }${range.upTo === undefined ? sql`` : sql` AND seq <= ${range.upTo}::int8`}
        ORDER BY submissions.created_date, submissions.seq
        LIMIT ${limit + 1}`

    // A page of the range with each row as the text `text` makes, joined by `separator`, `end` after the last.
    const joinedRows = (
      fileId: FileData.FileId,
      range: FileRepository.SubmissionRange,
      text: Statement.Fragment,
      separator: string,
      end = ""
    ): Effect.Effect<EncodedPages.JoinedPage, FileDataError.StorageUnavailable> => {
      const lower = lowerOf(range)
      if (lower === undefined) return Effect.succeed({ joined: "", count: 0, next: range.after, hasMore: false })
      const limit = range.limit ?? pageSize
      return Effect.map(read(rowsOf<TextRow>(sql`${text} AS text`, fileId, lower, range, limit)), (rows) => {
        const count = Math.min(rows.length, limit)
        const texts: Array<string> = new Array(count)
        for (let i = 0; i < count; i++) texts[i] = (rows[i] as TextRow).text
        const joined = JoinedText.join(texts, separator, end)
        const next = nextOf(range, lower, rows[count - 1])
        return rows.length > limit ? { joined, count, next, hasMore: true } : { joined, count, next, hasMore: false }
      })
    }

    // First pages `findAccess` read, keyed by file and read point, each taken once by the whole-file read of
    // that file at that read point. Rows at or below a read point never change, so the page is the one a
    // fresh read would return (docs/performance.md#postgresql-and-redis).
    const prefetched = new Map<string, { readonly page: EncodedPages.JoinedPage; readonly chars: number }>()
    let heldChars = 0
    const take = (key: string) => {
      const held = prefetched.get(key)
      if (held === undefined) return undefined
      prefetched.delete(key)
      heldChars -= held.chars
      return held.page
    }
    const keep = (fileId: string, readPoint: string, page: EncodedPages.JoinedPage, chars: number) => {
      if (chars > prefetchedChars) return
      while (prefetched.size >= prefetchedCapacity || heldChars + chars > prefetchedChars) {
        take(prefetched.keys().next().value as string)
      }
      prefetched.set(`${readPoint}:${fileId}`, { page, chars })
      heldChars += chars
    }

    // findAccess's statement ($1 the file id, $2 the key's hash), described at findAccess below. With the pool,
    // a named prepared statement: each connection parses and plans it once, where an unnamed one is planned at
    // every request, which cost PostgreSQL about three times a request's CPU (docs/performance.md#postgresql-and-redis).
    const accessText = `SELECT k.user_id AS owner, f.id, f.user_id, f.name,
        (extract(epoch from f.creation_date) * 1000)::int8 AS creation_date, f.public_availability,
        f.submission_counter, f.visit_counter, (SELECT seq FROM submission_read_point) AS read_point,
        s.joined, s.count
      FROM api_keys k LEFT JOIN files f ON f.id = $1
      LEFT JOIN LATERAL (SELECT string_agg(entry, ',' ORDER BY created_date, seq) AS joined, count(*) AS count
        FROM (SELECT entry, created_date, seq FROM submissions
          WHERE file_id = f.id AND f.user_id = k.user_id AND seq <= (SELECT seq FROM submission_read_point)
          ORDER BY created_date, seq LIMIT ${pageSize + 1}) first) s ON f.user_id = k.user_id
      WHERE k.key_hash = $2 AND k.revoked_at IS NULL`
    const { pool } = options
    const access = (fileId: string, keyHash: string): Effect.Effect<ReadonlyArray<AccessRow>, SqlError> =>
      pool === undefined
        ? sql.unsafe<AccessRow>(accessText, [fileId, keyHash])
        : Effect.async((resume) => {
            pool.query<AccessRow>(
              { name: `filedata-access-${pageSize}`, text: accessText, values: [fileId, keyHash] },
              (cause, result) =>
                resume(
                  cause
                    ? Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
                    : Effect.succeed(result.rows)
                )
            )
          })

    const repository: PgFileRepository = {
      // The key's row first, so an unknown or revoked key never reaches `files`; no row when the key matches no
      // active key, the file's columns null when no file has the id. The read point in the same statement, so
      // from the same snapshot, as the file's row (PgMigrations). When the key's user owns the file, its first
      // rows up to the read point come joined too: a file that fits one page is a whole reply in one round trip.
      // The read point as scalar subqueries, not a join: the planner has no statistics for its one-row table,
      // guesses thousands of rows, and the cost it then estimates turns on JIT compilation (200 ms a statement).
      findAccess: (apiKey, fileId) =>
        read(access(fileId, KeyHash.hashKey(apiKey))).pipe(
          Effect.map((rows) => {
            const row = rows[0]
            if (row === undefined) return FileRepository.noAccess
            if (row.id === null) return { owner: Option.some(row.owner as FileData.UserId), file: Option.none() }
            const count = Number(row.count)
            // Only a whole file.
            if (row.count !== null && count <= pageSize) {
              keep(
                row.id,
                row.read_point,
                { joined: row.joined ?? "", count, next: undefined, hasMore: false },
                (row.joined ?? "").length
              )
            }
            return { owner: Option.some(row.owner as FileData.UserId), file: Option.some(toFoundFile(row)) }
          })
        ),
      readSubmissions: (fileId, range) => {
        const lower = lowerOf(range)
        if (lower === undefined) return Effect.succeed({ entries: [], ids: [], next: range.after, hasMore: false })
        const limit = range.limit ?? pageSize
        return Effect.map(read(rowsOf<SubmissionRow>(sql`id, entry`, fileId, lower, range, limit)), (rows) => {
          const count = Math.min(rows.length, limit)
          const entries: Array<SubmissionEntry.SubmissionEntry> = new Array(count)
          const ids: Array<SubmissionId.SubmissionId> = new Array(count)
          for (let i = 0; i < count; i++) {
            const row = rows[i] as SubmissionRow
            entries[i] = SubmissionEntry.unsafeStored(row.entry)
            ids[i] = SubmissionId.unsafeStored(row.id)
          }
          const next = nextOf(range, lower, rows[count - 1])
          return rows.length > limit ? { entries, ids, next, hasMore: true } : { entries, ids, next, hasMore: false }
        })
      },
      // A page of the file's change feed (docs/architecture.md#the-change-feed): its stored submissions and its
      // erasures past a seq, up to the read point, merged in seq order. EXPLAIN: a `Merge Append` of each
      // table's index scan in seq order under the `Limit`, so a page reads as far as it needs. Each side has the
      // limit too: with statistics that call a file small, PostgreSQL may read it by a bitmap and sort it, and
      // the limit keeps that sort a page's (top-N), never the file's.
      readChanges: (fileId, range) => {
        const after = range.after ?? ChangeRows.start
        const seq = ChangeRows.parse(after)
        // A position no adapter makes names no change.
        if (seq === undefined) return Effect.succeed({ changes: [], next: after, hasMore: false })
        const limit = range.limit ?? pageSize
        const upTo = range.upTo === undefined ? sql`` : sql` AND seq <= ${range.upTo}::int8`
        return Effect.map(
          read(
            sql`(SELECT seq, id, entry FROM submissions
                WHERE file_id = ${fileId} AND seq > ${seq}::int8${upTo} ORDER BY seq LIMIT ${limit + 1})
              UNION ALL (SELECT seq, submission_id, NULL FROM submission_erasures
                WHERE file_id = ${fileId} AND seq > ${seq}::int8${upTo} ORDER BY seq LIMIT ${limit + 1})
              ORDER BY seq LIMIT ${limit + 1}`.values
          ),
          (rows) => ChangeRows.page(rows as ReadonlyArray<ChangeRows.Row>, limit, after)
        )
      },
      // The first page `findAccess` read, for the reply of a whole file that asks no end position; otherwise a
      // page of each entry as stored, or with its id first, joined.
      encodedPages: {
        readJoined: (fileId, range, form) => {
          if (
            form === "stored" &&
            range.after === undefined &&
            range.since === undefined &&
            range.until === undefined &&
            range.limit === undefined &&
            range.upTo !== undefined &&
            range.endPosition === false
          ) {
            const page = take(`${range.upTo}:${fileId}`)
            if (page !== undefined) return Effect.succeed(page)
          }
          return joinedRows(fileId, range, form === "stored" ? sql`entry` : withId, ",")
        },
        // Each row's line made by PostgreSQL from what import stored (docs/performance.md#export-rows-rendered-at-import),
        // joined here as `readJoined` joins entries.
        readExportRows: (fileId, range, rows) =>
          // The line ends are written by the join, not concatenated to each row here. An NDJSON line is the entry
          // with its id first.
          rows.format === "csv"
            ? joinedRows(fileId, range, sql`csv || repeat(',', ${rows.names.length}::int4 - csv_width)`, "\r\n", "\r\n")
            : joinedRows(fileId, range, withId, "\n", "\n")
      },
      // By the primary key (PgMigrations), up to the read point.
      readContentNames: (fileId, upTo) =>
        read(sql<{ readonly name: string }>`SELECT name FROM content_names
          WHERE file_id = ${fileId} AND seq <= ${upTo}::int8 ORDER BY position`).pipe(
          Effect.map((rows) => rows.map((row) => row.name))
        ),
      // The file's row and the read point in one statement, as `findAccess` reads them.
      findFile: (fileId) =>
        read(sql<FileRow>`SELECT f.id, f.user_id, f.name, ${epochMillis(sql, "f.creation_date")} AS creation_date,
          f.public_availability, f.submission_counter, f.visit_counter,
          (SELECT seq FROM submission_read_point) AS read_point
          FROM files f WHERE f.id = ${fileId}`).pipe(
          Effect.map((rows) => (rows[0] === undefined ? Option.none() : Option.some(toFoundFile(rows[0]))))
        ),
      ping: Effect.asVoid(read(sql`SELECT 1`)),
      // The files with rows or erasures past a seq, by a range of each primary key: two seeks when nothing is new.
      changesAfter: (position: number) =>
        Effect.map(
          read(sql<{ readonly file_id: string; readonly top: string }>`SELECT file_id, max(seq) AS top
            FROM (SELECT file_id, seq FROM submissions WHERE seq > ${position}::int8
              UNION ALL SELECT file_id, seq FROM submission_erasures WHERE seq > ${position}::int8) AS changed
            GROUP BY file_id`),
          (rows): SubmissionSignals.Changes => {
            let top: number | undefined
            for (const row of rows) top = Math.max(top ?? 0, Number(row.top))
            return { files: rows.map((row) => row.file_id as FileData.FileId), top }
          }
        )
    }
    return repository
  })

/**
 * Builds the repository with the {@link defaultPageSize}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<FileRepository.FileRepository, never, SqlClient.SqlClient> = makeWith({
  pageSize: defaultPageSize
})
