import { randomBytes } from "node:crypto"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ChangeCursor, FileData, SubmissionCursor, SubmissionEntry, SubmissionId, Webhook } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import type * as SqlDialect from "../SqlDialect.js"
import * as SubmissionPosition from "../SubmissionPosition.js"

/**
 * The enabled webhooks of an append's files, and the highest `seq` before its submissions go in: under the
 * write lock no other writer inserts, so the append's own rows are exactly those above it.
 *
 * @internal
 */
export interface Pending {
  readonly before: string
  readonly webhooks: ReadonlyMap<string, ReadonlyArray<string>>
}

/**
 * An event id as Standard Webhooks wants one (no `.`): 128 random bits in base64url.
 *
 * @internal
 */
export const eventId = (): string => `msg_${randomBytes(16).toString("base64url")}`

/**
 * A stored submission as the outbox and the erasure read it: its `seq` (int8 may come as text), id, `created_date`
 * in epoch milliseconds and entry.
 *
 * @internal
 */
export interface SubmissionRow {
  readonly seq: number | string
  readonly id: string
  readonly created_date: number | string
  readonly entry: string
}

/**
 * A row's place in reply order.
 *
 * @internal
 */
export const positionOf = (row: SubmissionRow): SubmissionPosition.Position => ({
  createdDate: Number(row.created_date),
  seq: String(row.seq)
})

/**
 * Rows in reply order (`SubmissionPosition.replyOrder`).
 *
 * @internal
 */
export const rowOrder: Order.Order<SubmissionRow> = Order.mapInput(SubmissionPosition.replyOrder, positionOf)

/**
 * The transactional outbox: both steps run inside the append's transaction, so its events commit or roll back
 * with its submissions.
 *
 * @internal
 */
export const make = (sql: SqlClient.SqlClient, dialect: SqlDialect.SqlDialect) => {
  const { instant, epochMillis, boolean, int8 } = dialect

  /** Before the copy: none when no file of the append has an enabled webhook, the common case, at one query. */
  const prepare = (fileIds: ReadonlyArray<string>): Effect.Effect<Option.Option<Pending>, SqlError> =>
    Effect.gen(function* () {
      if (fileIds.length === 0) return Option.none()
      const rows = yield* Effect.map(
        Effect.forEach(
          Arr.chunksOf(fileIds, 500),
          (batch) => sql<{ readonly id: string; readonly file_id: string }>`SELECT id, file_id FROM webhooks
            WHERE enabled = ${boolean(true)} AND ${sql.in("file_id", batch)} ORDER BY file_id, created_at, id`
        ),
        (pages) => pages.flat()
      )
      if (rows.length === 0) return Option.none()
      const webhooks = new Map<string, Array<string>>()
      for (const row of rows) webhooks.set(row.file_id, [...(webhooks.get(row.file_id) ?? []), row.id])
      const [top] = yield* sql<{ readonly seq: number | string }>`SELECT COALESCE(MAX(seq), 0) AS seq FROM submissions`
      return Option.some({ before: String(top?.seq ?? 0), webhooks })
    })

  // One page of a file's appended submissions in feed (seq) order, after the page before: each event covers a
  // contiguous run of the file's feed, so a receiver catching up from its `changesNext` misses nothing.
  const page = (fileId: string, after: string) =>
    sql<SubmissionRow>`SELECT seq, id, ${epochMillis("created_date")} AS created_date, entry FROM submissions
      WHERE file_id = ${fileId} AND seq > ${int8(after)}
      ORDER BY seq LIMIT ${Webhook.submissionsPerEvent}`

  /** A file's counters as its events tell them; none when no file has the id. */
  const counters = (fileId: string) =>
    Effect.map(
      sql<{ readonly submission_counter: number | string; readonly visit_counter: number | string }>`
        SELECT submission_counter, visit_counter FROM files WHERE id = ${fileId}`,
      ([row]) =>
        row === undefined
          ? undefined
          : { submissionCounter: Number(row.submission_counter), visitCounter: Number(row.visit_counter) }
    )

  /** After the copy and the counters: one event per file and per page of its submissions, for each webhook. */
  const write = (pending: Pending): Effect.Effect<void, SqlError> =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const timestamp = FileData.timestampFromEpochMillis(now)
      for (const [fileId, webhookIds] of pending.webhooks) {
        const counted = yield* counters(fileId)
        if (counted === undefined) continue
        const file = FileData.FileId.make(fileId)
        let after = pending.before
        for (;;) {
          const rows = yield* page(fileId, after)
          if (!Arr.isNonEmptyReadonlyArray(rows)) break
          const last = Arr.lastNonEmpty(rows)
          // The body lists its submissions in reply order, and `next` follows the latest of them.
          const ordered = Arr.sort(rows, rowOrder)
          const latest = positionOf(Arr.lastNonEmpty(ordered))
          const body = Webhook.eventBody({
            timestamp,
            fileId: file,
            ...counted,
            entries: ordered.map((row) => SubmissionEntry.unsafeStored(row.entry)),
            ids: ordered.map((row) => SubmissionId.unsafeStored(row.id)),
            next: SubmissionCursor.encode(file, SubmissionPosition.format(latest)),
            changesNext: ChangeCursor.encode(file, String(last.seq))
          })
          yield* insert(webhookIds, body, now)
          if (rows.length < Webhook.submissionsPerEvent) break
          after = String(last.seq)
        }
      }
    })

  /** One event of `body` for each of the webhooks, pending from `now`. */
  const insert = (webhookIds: ReadonlyArray<string>, body: string, now: number): Effect.Effect<void, SqlError> =>
    Effect.asVoid(sql`INSERT INTO webhook_events (id, webhook_id, body, created_at, state, step, attempts,
        next_attempt_at)
      VALUES ${sql.csv(
        webhookIds.map(
          (webhookId) => sql`(${eventId()}, ${webhookId}, ${body}, ${instant(now)}, 'pending', 0, 0, ${instant(now)})`
        )
      )}`)

  return { prepare, write, insert, counters }
}
