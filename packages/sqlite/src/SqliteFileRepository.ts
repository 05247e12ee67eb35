/**
 * The `FileRepository` port on a read connection of its own to the SQLite file: statements prepared once and
 * run synchronously (`internal/statements.ts`, docs/performance.md#sqlite-reads-on-their-own-connection), pages
 * and where they end (`internal/pageEnd.ts`), the reply's later pages joined inside SQLite once
 * `internal/joinedOrder.ts` has checked the library keeps their order. Writes stay on the @effect/sql client; in
 * WAL mode this reader never waits for them. The connection follows the file at its path
 * (`internal/followedFile.ts`), and the reads of one turn of the event loop share one read transaction
 * (`internal/readSnapshot.ts`), so a request's access and first page come from one snapshot.
 *
 * @since 0.1.0
 */
import {
  type EncodedPages,
  type FileData,
  type FileDataError,
  FileRepository,
  type Immediate,
  type SubmissionSignals
} from "@filedata/core"
import { ChangeRows, JoinedText, KeyHash } from "@filedata/sql"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as JoinedOrder from "./internal/joinedOrder.js"
import { ending, endingAt, entriesAndIds, rowsOf, spanOf } from "./internal/pageEnd.js"
import * as ReadConnection from "./internal/readConnection.js"
import {
  type ChangeRow,
  type JoinedChangesRow,
  type JoinedRow,
  joinedChangesSql,
  joinedPageSize,
  joinedSql,
  prepare,
  toFoundFile
} from "./internal/statements.js"

/**
 * How many submissions one page reads when no size is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPageSize = 1000

/**
 * The port, plus what the storage layer needs to keep its own writes visible to the next read.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteFileRepository extends FileRepository.FileRepository {
  /** Answered at once, from a read in the caller's stack (`Immediate`), as every read here. */
  readonly findAccess: (
    apiKey: FileData.ApiKey,
    fileId: FileData.FileId
  ) => Immediate.Immediate<FileRepository.Access, FileDataError.StorageUnavailable>
  readonly readSubmissions: (
    fileId: FileData.FileId,
    range: FileRepository.SubmissionRange
  ) => Immediate.Immediate<FileRepository.SubmissionPage, FileDataError.StorageUnavailable>
  readonly readChanges: (
    fileId: FileData.FileId,
    range: FileRepository.ChangeRange
  ) => Immediate.Immediate<FileRepository.ChangePage, FileDataError.StorageUnavailable>
  readonly readContentNames: (
    fileId: FileData.FileId,
    upTo: FileRepository.ReadPoint
  ) => Immediate.Immediate<ReadonlyArray<string>, FileDataError.StorageUnavailable>
  readonly findFile: (
    fileId: FileData.FileId
  ) => Immediate.Immediate<Option.Option<FileRepository.FoundFile>, FileDataError.StorageUnavailable>
  /**
   * Pages joined inside SQLite (docs/performance.md#pages-joined-in-storage), the feed's among them, export rows
   * from the rows import stored (docs/performance.md#export-rows-rendered-at-import).
   */
  readonly encodedPages: {
    readonly readJoined: (
      fileId: FileData.FileId,
      range: FileRepository.SubmissionRange,
      form: EncodedPages.EntryForm
    ) => Immediate.Immediate<EncodedPages.JoinedPage, FileDataError.StorageUnavailable>
    readonly readExportRows: (
      fileId: FileData.FileId,
      range: FileRepository.SubmissionRange,
      rows: EncodedPages.ExportRows
    ) => Immediate.Immediate<EncodedPages.JoinedPage, FileDataError.StorageUnavailable>
    readonly readJoinedChanges: (
      fileId: FileData.FileId,
      range: FileRepository.ChangeRange
    ) => Immediate.Immediate<EncodedPages.JoinedChanges, FileDataError.StorageUnavailable>
  }
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
  /** The files with submissions stored or erased past a read point's seq, and the highest seq among them. */
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
    const joins = { pages: JoinedOrder.holds(joinedSql), changes: JoinedOrder.changesHold(joinedChangesSql) }
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
          if (span === undefined) return { entries: [], ids: [], next: range.after, hasMore: false }
          const bounds = span[1]
          const limit = range.limit ?? pageSize
          const page = entriesAndIds(statements, bounds, limit)
          return { ...page, ...ending(statements, span, range, page.entries.length, limit) }
        }),
      readChanges: (fileId, range) =>
        read((statements) => {
          const after = range.after ?? ChangeRows.start
          // A position no adapter makes names no change.
          if (ChangeRows.parse(after) === undefined) return { changes: [], next: after, hasMore: false }
          const limit = range.limit ?? pageSize
          const upTo = range.upTo === undefined ? Number.MAX_SAFE_INTEGER : Number(range.upTo)
          const seq = Number(after)
          const rows: Array<ChangeRow> = statements.changesOf.all(fileId, seq, upTo, fileId, seq, upTo, limit + 1)
          return ChangeRows.page(rows, limit, after)
        }),
      encodedPages: {
        // Each entry as stored (the File reply's), or with its id first (the incremental read's), made by SQLite
        // either way.
        readJoined: (fileId, range, form) =>
          read((statements) => {
            const span = spanOf(fileId, range)
            if (span === undefined) return { joined: "", count: 0, next: range.after, hasMore: false }
            const bounds = span[1]
            const joined = statements.joined?.[form]
            // A range's first page as rows joined here: it is most often a whole reply of a few submissions, which
            // measured faster that way (docs/performance.md#pages-joined-in-storage).
            if (joined === undefined || range.after === undefined) {
              const limit = range.limit ?? pageSize
              const texts = rowsOf(statements, statements.entries[form], bounds, limit)
              const end = ending(statements, span, range, texts.length, limit)
              return { joined: JoinedText.join(texts, ","), count: texts.length, ...end }
            }
            const limit = range.limit ?? joinedPageSize(pageSize)
            const [stored, count, lastDate] = (
              range.limit === undefined ? joined.pages.get(...bounds) : joined.pagesOf.get(...bounds, limit)
            ) as JoinedRow
            const end =
              (count === limit && lastDate !== null && endingAt(statements, bounds, lastDate)) ||
              ending(statements, span, range, count, limit)
            return { joined: stored ?? "", count, ...end }
          }),
        // Joined inside SQLite from the rows import stored, a first page of `pageSize` and the reply's longer pages
        // after it; read as entries and rendered here where the library's join cannot be used.
        readExportRows: (fileId, range, rows) =>
          read((statements) => {
            const span = spanOf(fileId, range)
            if (span === undefined) return { joined: "", count: 0, next: range.after, hasMore: false }
            const bounds = span[1]
            const limit = range.limit ?? (range.after === undefined ? pageSize : joinedPageSize(pageSize))
            const csv = rows.format === "csv"
            if (statements.exportCsv === undefined || statements.exportLines === undefined) {
              const page = entriesAndIds(statements, bounds, limit)
              const end = ending(statements, span, range, page.entries.length, limit)
              return JoinedText.exportPage(rows, { ...page, ...end })
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
        // The feed's page joined by SQLite; where the library's join cannot be used, `readChanges`'s rows joined
        // here.
        readJoinedChanges: (fileId, range) =>
          read((statements) => {
            const after = range.after ?? ChangeRows.start
            if (ChangeRows.parse(after) === undefined) return { joined: "", count: 0, next: after, hasMore: false }
            const limit = range.limit ?? pageSize
            const upTo = range.upTo === undefined ? Number.MAX_SAFE_INTEGER : Number(range.upTo)
            const seq = Number(after)
            if (statements.joinedChanges === undefined) {
              const rows = statements.changesOf.all(fileId, seq, upTo, fileId, seq, upTo, limit + 1)
              return JoinedText.changes(ChangeRows.page(rows, limit, after))
            }
            const [joined, count, last] = statements.joinedChanges.get(
              fileId,
              seq,
              upTo,
              fileId,
              seq,
              upTo,
              limit
            ) as JoinedChangesRow
            if (last === null) return { joined: "", count: 0, next: after, hasMore: false }
            const hasMore =
              count === limit && statements.changesBeyond.get(fileId, last, upTo, fileId, last, upTo) !== undefined
            return { joined: joined ?? "", count, next: String(last), hasMore }
          })
      },
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
          for (const [fileId, seq] of statements.changes.all(position, position)) {
            files.push(fileId as FileData.FileId)
            if (top === undefined || seq > top) top = seq
          }
          return { files, top }
        })
    }
  })
