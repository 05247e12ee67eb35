// The statements of `OperatorStore.eraseSubmissions` (`SqlOperatorStore`), run inside its transaction under the
// write lock: find what the selection names, refuse or erase it, scrub the outbox and write the erased events.
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ChangeCursor, Erasure, FileData, SubmissionEntry, SubmissionId, Webhook } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as SqlDialect from "../SqlDialect.js"
import * as Outbox from "./outbox.js"

// Rows per statement and per page of the outbox scan, far below both engines' parameter limits.
const BATCH = 500

interface EventRow {
  readonly seq: number | string
  readonly id: string
  readonly body: string
}

// A submission as JSON text in one spelling, whatever escapes it was written with: its stored entry and its copy
// in an event body, each parsed, give the same text.
const canonical = (submission: unknown): string => JSON.stringify(submission)

// What a `submissions.created` body says, as `Webhook.eventBody` wrote it.
interface CreatedBody {
  readonly type: string
  readonly timestamp: FileData.Timestamp
  readonly data: {
    readonly fileId: FileData.FileId
    readonly SubmissionCounter: number
    readonly VisitCounter: number
    readonly submissions: ReadonlyArray<{ readonly id?: string }>
    readonly next: Webhook.EventData["next"]
    readonly changesNext: ChangeCursor.ChangeCursor
  }
}

/**
 * The erasure's steps over `sql`, in `dialect`'s SQL, writing its events through `outbox`.
 *
 * @internal
 */
export const make = (
  sql: SqlClient.SqlClient,
  dialect: SqlDialect.SqlDialect,
  outbox: ReturnType<typeof Outbox.make>
) => {
  const { epochMillis, int8, boolean, contentHas, takeSeqs, beforeErasure } = dialect

  const { counters } = outbox

  // Every id must name a submission of the file; the others are named, by where they belong, and nothing is erased.
  const byIds = (
    fileId: string,
    ids: ReadonlyArray<string>
  ): Effect.Effect<ReadonlyArray<Outbox.SubmissionRow>, Erasure.SubmissionsNotInFile | SqlError> =>
    Effect.gen(function* () {
      const wanted = Arr.dedupe(ids)
      const rows = (yield* Effect.forEach(
        Arr.chunksOf(wanted, BATCH),
        (batch) => sql<Outbox.SubmissionRow & { readonly file_id: string }>`SELECT seq, id, file_id,
          ${epochMillis("created_date")} AS created_date, entry FROM submissions WHERE ${sql.in("id", batch)}`
      )).flat()
      const fileOf = new Map(rows.map((row) => [row.id, row.file_id]))
      const unknown = wanted.filter((id) => !fileOf.has(id))
      const elsewhere = wanted.filter((id) => fileOf.has(id) && fileOf.get(id) !== fileId)
      if (unknown.length > 0 || elsewhere.length > 0) {
        return yield* new Erasure.SubmissionsNotInFile({ fileId, unknown, elsewhere })
      }
      return rows
    })

  // The index on (file_id, seq) narrows the scan to the file; the engine tests each content in place.
  const byContent = (fileId: string, matches: Arr.NonEmptyReadonlyArray<Erasure.ContentMatch>) =>
    sql<Outbox.SubmissionRow>`SELECT seq, id, ${epochMillis("created_date")} AS created_date, entry FROM submissions
      WHERE file_id = ${fileId} AND ${sql.and(matches.map((match) => contentHas(match.name, match.value)))}`

  // Events of the file's webhooks, whatever their state (a delivered or failed one can be redelivered), that carry
  // an erased submission: rewritten without it, the rest of the body as it was, or deleted when none is left.
  // Their attempts stay in the deliveries log: they hold no content, and say truly what was sent when.
  const scrub = (fileId: string, erased: ReadonlyArray<Outbox.SubmissionRow>): Effect.Effect<void, SqlError> =>
    Effect.gen(function* () {
      const ids = new Set(erased.map((row) => row.id))
      // Events written before submissions had ids (0.2) name them by their entry alone: matched on it, which
      // also drops an identical submission that was not erased from such an event.
      const entries = new Set(erased.map((row) => canonical(JSON.parse(row.entry))))
      const isErased = (submission: { readonly id?: string }) =>
        submission.id === undefined ? entries.has(canonical(submission)) : ids.has(submission.id)
      let after: number | string = 0
      for (;;) {
        const events: ReadonlyArray<EventRow> = yield* sql<EventRow>`SELECT e.seq AS seq, e.id AS id, e.body AS body
            FROM webhook_events AS e JOIN webhooks AS w ON w.id = e.webhook_id
            WHERE w.file_id = ${fileId} AND e.seq > ${int8(after)}
              AND e.body LIKE ${`{"type":${JSON.stringify(Webhook.eventType)}%`}
            ORDER BY e.seq LIMIT ${BATCH}`
        const last = events.at(-1)
        if (last === undefined) return
        for (const event of events) {
          const body = JSON.parse(event.body) as CreatedBody
          if (!body.data.submissions.some(isErased)) continue
          const kept = body.data.submissions.filter((submission) => !isErased(submission))
          if (kept.length === 0) {
            yield* sql`DELETE FROM webhook_events WHERE id = ${event.id}`
            continue
          }
          yield* sql`UPDATE webhook_events SET body = ${yield* rewritten(body, kept)} WHERE id = ${event.id}`
        }
        after = last.seq
      }
    })

  // The body again with only the kept submissions. With ids, each is its stored entry, so its bytes are the
  // original's; an event of before ids is written back as parsed, which is the same JSON.
  const rewritten = (
    body: CreatedBody,
    kept: ReadonlyArray<{ readonly id?: string }>
  ): Effect.Effect<string, SqlError> => {
    const ids = kept.flatMap((submission) => (submission.id === undefined ? [] : [submission.id]))
    if (ids.length < kept.length) {
      return Effect.succeed(JSON.stringify({ ...body, data: { ...body.data, submissions: kept } }))
    }
    return Effect.map(
      sql<{
        readonly id: string
        readonly entry: string
      }>`SELECT id, entry FROM submissions WHERE ${sql.in("id", ids)}`,
      (rows) => {
        const entries = new Map(rows.map((row) => [row.id, row.entry]))
        const present = ids.flatMap((id) => {
          const entry = entries.get(id)
          return entry === undefined ? [] : [{ id, entry }]
        })
        return Webhook.eventBody({
          timestamp: body.timestamp,
          fileId: body.data.fileId,
          submissionCounter: body.data.SubmissionCounter,
          visitCounter: body.data.VisitCounter,
          entries: present.map((kept) => SubmissionEntry.unsafeStored(kept.entry)),
          ids: present.map((kept) => SubmissionId.unsafeStored(kept.id)),
          next: body.data.next,
          changesNext: body.data.changesNext
        })
      }
    )
  }

  // One `submissions.erased` event per run of at most `Webhook.idsPerEvent` erasures, for each enabled webhook.
  const announce = (
    fileId: FileData.FileId,
    erasures: ReadonlyArray<{ readonly id: string; readonly seq: string }>,
    after: { readonly submissionCounter: number; readonly visitCounter: number }
  ): Effect.Effect<void, SqlError> =>
    Effect.gen(function* () {
      const webhooks = yield* sql<{ readonly id: string }>`SELECT id FROM webhooks
        WHERE file_id = ${fileId} AND enabled = ${boolean(true)} ORDER BY created_at, id`
      if (webhooks.length === 0) return
      const now = yield* Clock.currentTimeMillis
      for (const run of Arr.chunksOf(erasures, Webhook.idsPerEvent)) {
        const body = Webhook.erasedEventBody({
          timestamp: FileData.timestampFromEpochMillis(now),
          fileId,
          ...after,
          ids: run.map((erasure) => SubmissionId.unsafeStored(erasure.id)),
          changesNext: ChangeCursor.encode(fileId, Arr.lastNonEmpty(run).seq)
        })
        yield* outbox.insert(
          webhooks.map((webhook) => webhook.id),
          body,
          now
        )
      }
    })

  /** The erasure itself, inside a transaction that holds the write lock. */
  const erase = (
    fileId: FileData.FileId,
    selection: Erasure.Selection
  ): Effect.Effect<Erasure.Summary, Erasure.UnknownFile | Erasure.SubmissionsNotInFile | SqlError> =>
    Effect.gen(function* () {
      if (beforeErasure !== undefined) yield* beforeErasure
      const before = yield* counters(fileId)
      if (before === undefined) return yield* new Erasure.UnknownFile({ fileId })
      const found = Arr.sort(
        selection._tag === "Ids" ? yield* byIds(fileId, selection.ids) : yield* byContent(fileId, selection.matches),
        Outbox.rowOrder
      )
      if (found.length === 0) return { fileId, ids: [], ...before }
      const seqs = yield* takeSeqs(found.length)
      const erasures = Arr.zipWith(found, seqs, (row, seq) => ({ id: row.id, seq }))
      for (const batch of Arr.chunksOf(found, BATCH)) {
        yield* sql`DELETE FROM submissions WHERE ${sql.in(
          "seq",
          batch.map((row) => row.seq)
        )}`
      }
      for (const batch of Arr.chunksOf(erasures, BATCH)) {
        yield* sql`INSERT INTO submission_erasures (seq, file_id, submission_id) VALUES ${sql.csv(
          batch.map((erasure) => sql`(${int8(erasure.seq)}, ${fileId}, ${erasure.id})`)
        )}`
      }
      // A counter the fixture set below the submissions stored stops at 0 rather than break its CHECK.
      const count = int8(found.length)
      yield* sql`UPDATE files
        SET submission_counter = CASE WHEN submission_counter > ${count} THEN submission_counter - ${count} ELSE 0 END
        WHERE id = ${fileId}`
      const after = {
        submissionCounter: Math.max(before.submissionCounter - found.length, 0),
        visitCounter: before.visitCounter
      }
      yield* scrub(fileId, found)
      yield* announce(fileId, erasures, after)
      return { fileId, ids: erasures.map((erasure) => SubmissionId.unsafeStored(erasure.id)), ...after }
    })

  return { erase }
}
