// The deliverer's side of the `WebhookStore` port (`SqlWebhookStore`): events leased to a deliverer, its attempts
// recorded, and the backlog of pending events. The store runs each in its transaction and maps its failures.
import { randomBytes } from "node:crypto"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type { WebhookStore } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as SqlDialect from "../SqlDialect.js"
import * as Rows from "./rows.js"

/**
 * Gives up the pending events of a webhook being disabled: enabling it again sends only events created after.
 *
 * @internal
 */
export const giveUp = (sql: SqlClient.SqlClient, id: string): Effect.Effect<unknown, SqlError> =>
  sql`UPDATE webhook_events SET state = 'failed', next_attempt_at = NULL
    WHERE webhook_id = ${id} AND state = 'pending'`

/**
 * The statements of a deliverer, on `sql` in `dialect`'s SQL: each to run inside a transaction of the store.
 *
 * @internal
 */
export const make = (sql: SqlClient.SqlClient, dialect: SqlDialect.SqlDialect) => {
  const { instant, epochMillis, boolean, skipLocked } = dialect
  const pendingCount = SqlSchema.single({
    Request: Schema.Void,
    Result: Schema.Struct({ n: Rows.Int }),
    execute: () => sql`SELECT COUNT(*) AS n FROM webhook_events WHERE state = 'pending'`
  })
  const oldestPending = SqlSchema.findOne({
    Request: Schema.Void,
    Result: Schema.Struct({ oldest: Rows.Int }),
    execute: () => sql`SELECT ${epochMillis("created_at")} AS oldest FROM webhook_events
      WHERE state = 'pending' ORDER BY created_at LIMIT 1`
  })
  // Leases the first pending events of webhooks with none leased: one statement (see `claim`).
  const leaseEvents = SqlSchema.findAll({
    Request: Schema.Struct({
      now: Schema.Number,
      leaseMillis: Schema.Number,
      limit: Schema.Number,
      token: Schema.String
    }),
    Result: Rows.ClaimedRow,
    execute: ({ now, leaseMillis, limit, token }) => sql`UPDATE webhook_events
      SET lease_until = ${instant(now + leaseMillis)}, lease_token = ${token}, attempts = attempts + 1
      WHERE seq IN (
        SELECT e.seq FROM webhook_events AS e JOIN webhooks AS w ON w.id = e.webhook_id
        WHERE e.state = 'pending' AND w.enabled = ${boolean(true)}
          AND e.next_attempt_at <= ${instant(now)}
          AND (e.lease_until IS NULL OR e.lease_until <= ${instant(now)})
          AND NOT EXISTS (SELECT 1 FROM webhook_events AS p
            WHERE p.webhook_id = e.webhook_id AND p.state = 'pending' AND p.seq < e.seq)
        ORDER BY e.next_attempt_at, e.seq
        LIMIT ${limit}
        ${skipLocked}
      )
      RETURNING seq, id, webhook_id, body, attempts, step`
  })
  const claimDetails = SqlSchema.findAll({
    Request: Schema.Array(Schema.String),
    Result: Rows.ClaimDetailsRow,
    execute: (ids) => sql`SELECT id, url, secret, previous_secret,
        ${epochMillis("previous_secret_until")} AS previous_secret_until,
        ${epochMillis("failing_since")} AS failing_since
      FROM webhooks WHERE ${sql.in("id", ids)}`
  })

  /** Leases events to one deliverer, with what it needs to send each: inside the claim's transaction. */
  const claim = ({ leaseMillis, limit }: { readonly leaseMillis: number; readonly limit: number }) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const token = randomBytes(12).toString("base64url")
      const claimed = yield* leaseEvents({ now, leaseMillis, limit, token })
      if (claimed.length === 0) return []
      const details = yield* claimDetails(Arr.dedupe(claimed.map((row) => row.webhookId)))
      const byId = new Map(details.map((row) => [row.id, row]))
      return claimed
        .map((row): WebhookStore.Claim | undefined => {
          const webhook = byId.get(row.webhookId)
          if (webhook === undefined) return undefined
          const { previousSecret, previousSecretUntil } = webhook
          return {
            eventId: row.id,
            webhookId: row.webhookId,
            url: webhook.url,
            body: row.body,
            secrets: {
              current: webhook.secret,
              previous:
                previousSecret !== null && previousSecretUntil !== null && previousSecretUntil > now
                  ? Option.some({ sealed: previousSecret, until: previousSecretUntil })
                  : Option.none()
            },
            attempt: row.attempts,
            step: row.step,
            failingSince: webhook.failingSince,
            leaseToken: token
          }
        })
        .filter((claim): claim is WebhookStore.Claim => claim !== undefined)
    })

  // Moves one claimed event on and logs its attempt; inside the transaction of the store's `record`.
  const record = (claim: WebhookStore.Claim, result: WebhookStore.AttemptResult) =>
    Effect.gen(function* () {
      const next = Option.getOrNull(result.nextAttemptAt)
      const state = result.outcome === "retrying" ? "pending" : result.outcome
      const moved = yield* sql<{ readonly id: string }>`UPDATE webhook_events
      SET state = ${state}, step = ${result.step},
        next_attempt_at = ${next === null ? null : instant(next)}, lease_until = NULL, lease_token = NULL
      WHERE id = ${claim.eventId} AND lease_token = ${claim.leaseToken} RETURNING id`
      // The lease ran out and another deliverer has the event, or the webhook was deleted meanwhile.
      if (moved.length === 0) return
      yield* sql`INSERT INTO webhook_attempts (webhook_id, event_id, attempt, at, status, outcome, error,
        duration_ms, next_attempt_at)
      VALUES (${claim.webhookId}, ${claim.eventId}, ${claim.attempt}, ${instant(result.at)},
        ${Option.getOrNull(result.status)}, ${result.outcome}, ${Option.getOrNull(result.error)},
        ${Math.round(result.durationMillis)}, ${next === null ? null : instant(next)})`
      yield* result.outcome === "delivered"
        ? sql`UPDATE webhooks SET failing_since = NULL WHERE id = ${claim.webhookId}`
        : sql`UPDATE webhooks SET failing_since = COALESCE(failing_since, ${instant(result.at)})
          WHERE id = ${claim.webhookId}`
      if (Option.isSome(result.disable)) {
        yield* sql`UPDATE webhooks SET enabled = ${boolean(false)}, disabled_reason = ${result.disable.value}
        WHERE id = ${claim.webhookId}`
        yield* giveUp(sql, claim.webhookId)
      }
    })

  /** How many events are pending, and since when the oldest. */
  const backlog = Effect.all({
    waiting: Effect.map(pendingCount(undefined), (row) => row.n),
    oldestCreatedAt: Effect.map(
      oldestPending(undefined),
      Option.map((row) => row.oldest)
    )
  })

  return { claim, record, backlog }
}
