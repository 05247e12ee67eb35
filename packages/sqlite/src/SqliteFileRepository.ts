/**
 * The `FileRepository` port over an @effect/sql SQLite client.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { FileRepository } from "@filedata/core"
import { FileData } from "@filedata/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { hashKey, unavailable } from "./internal/storage.js"

/**
 * How many submissions one page reads when no size is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPageSize = 1000

interface FileRow {
  readonly id: string
  readonly user_id: string
  readonly name: string
  readonly creation_date: number
  readonly public_availability: number
  readonly submission_counter: number
  readonly visit_counter: number
}

interface SubmissionRow {
  readonly seq: number
  readonly created_date: number
  readonly content: string
}

interface Cursor {
  readonly createdDate: number
  readonly seq: number
}

// Below every representable instant and every seq, so the first page needs no query of its own.
const start: Cursor = { createdDate: Number.MIN_SAFE_INTEGER, seq: 0 }

// Rows were checked by the core's schemas when they were written, so their ids are valid as read.
const toStoredFile = (row: FileRow): FileData.StoredFile => ({
  id: row.id as FileData.FileId,
  ownerId: row.user_id as FileData.UserId,
  name: row.name,
  creationDate: FileData.timestampFromEpochMillis(row.creation_date),
  publicAvailability: row.public_availability === 1,
  SubmissionCounter: row.submission_counter,
  VisitCounter: row.visit_counter
})

/**
 * Builds the repository reading submissions in pages of `pageSize` rows.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: {
  readonly pageSize: number
}): Effect.Effect<FileRepository.FileRepository, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const { pageSize } = options
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      return yield* Effect.dieMessage(`pageSize must be a positive integer, got ${pageSize}`)
    }
    const sql = yield* SqlClient.SqlClient

    // Keyset paging: each page seeks past the last row of the previous one, so a page costs the same at
    // the end of a million rows as at the start. The leading `created_date >= ?` repeats what the OR
    // implies, but without it SQLite only seeks on file_id and rescans the file's earlier rows on every
    // page. EXPLAIN QUERY PLAN: `SEARCH submissions USING INDEX submissions_file_created_seq
    // (file_id=? AND created_date>?)`, no `USE TEMP B-TREE FOR ORDER BY`.
    const page = (fileId: FileData.FileId, after: Cursor) =>
      sql<SubmissionRow>`SELECT seq, created_date, content FROM submissions
        WHERE file_id = ${fileId} AND created_date >= ${after.createdDate}
          AND (created_date > ${after.createdDate} OR (created_date = ${after.createdDate} AND seq > ${after.seq}))
        ORDER BY created_date, seq
        LIMIT ${pageSize}`.pipe(Effect.mapError(unavailable))

    return {
      findKeyOwner: (apiKey) =>
        sql<{ readonly user_id: string }>`SELECT user_id FROM api_keys
          WHERE key_hash = ${hashKey(apiKey)} AND revoked_at IS NULL`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.user_id as FileData.UserId)),
          Effect.mapError(unavailable)
        ),
      findFile: (fileId) =>
        sql<FileRow>`SELECT id, user_id, name, creation_date, public_availability, submission_counter, visit_counter
          FROM files WHERE id = ${fileId}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toStoredFile)),
          Effect.mapError(unavailable)
        ),
      submissions: (fileId) =>
        Stream.paginateChunkEffect(start, (after) =>
          Effect.map(page(fileId, after), (rows) => {
            const last = rows[rows.length - 1]
            return [
              Chunk.unsafeFromArray(
                rows.map(
                  (row): FileData.StoredSubmission => ({
                    createdDate: FileData.timestampFromEpochMillis(row.created_date),
                    contentJson: row.content
                  })
                )
              ),
              rows.length < pageSize || last === undefined
                ? Option.none()
                : Option.some({ createdDate: last.created_date, seq: last.seq })
            ] as const
          })
        ),
      ping: sql`SELECT 1`.pipe(Effect.asVoid, Effect.mapError(unavailable))
    }
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
