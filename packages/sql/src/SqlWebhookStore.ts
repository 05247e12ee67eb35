/**
 * The `WebhookStore` port over an @effect/sql client, for any engine a `SqlDialect` describes. Events are
 * written by the append's own transaction (`SqlOperatorStore`); here they are claimed, recorded and managed.
 *
 * @since 0.2.0
 */
import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { FileData, type FileDataError, Webhook, type WebhookStore } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { hashKey } from "./KeyHash.js"
import type * as SqlDialect from "./SqlDialect.js"
import { unavailable } from "./StorageFailure.js"

// Instants arrive as numbers, or as int8 text from PostgreSQL.
type Millis = number | string

interface WebhookRow {
  readonly id: string
  readonly file_id: string
  readonly user_id: string
  readonly url: string
  readonly enabled: boolean | number
  readonly created_at: Millis
  readonly disabled_reason: string | null
}

interface DeliveryRow {
  readonly event_id: string
  readonly attempt: number
  readonly at: Millis
  readonly status: number | null
  readonly outcome: string
  readonly error: string | null
  readonly duration_ms: number
  readonly next_attempt_at: Millis | null
}

interface ClaimedRow {
  readonly seq: number | string
  readonly id: string
  readonly webhook_id: string
  readonly body: string
  readonly attempts: number
  readonly step: number
}

interface DetailsRow {
  readonly id: string
  readonly url: string
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_secret_until: Millis | null
  readonly failing_since: Millis | null
}

const toWebhook = (row: WebhookRow): Webhook.Webhook => ({
  id: row.id,
  fileId: FileData.FileId.make(row.file_id),
  ownerId: FileData.UserId.make(row.user_id),
  url: row.url,
  enabled: row.enabled === true || row.enabled === 1,
  createdAt: FileData.timestampFromEpochMillis(Number(row.created_at)),
  disabledReason: Option.fromNullable(row.disabled_reason as Webhook.DisabledReason | null)
})

const toDelivery = (row: DeliveryRow): Webhook.Delivery => ({
  eventId: row.event_id,
  attempt: Number(row.attempt),
  at: FileData.timestampFromEpochMillis(Number(row.at)),
  status: Option.fromNullable(row.status).pipe(Option.map(Number)),
  outcome: row.outcome as Webhook.DeliveryOutcome,
  error: Option.fromNullable(row.error),
  durationMillis: Number(row.duration_ms),
  nextAttemptAt: Option.map(Option.fromNullable(row.next_attempt_at), (millis) =>
    FileData.timestampFromEpochMillis(Number(millis))
  )
})

const webhookId = (): string => `wh_${randomBytes(12).toString("base64url")}`

/**
 * Builds the webhook store on the client in context, with the engine's own SQL from `dialect`. `aroundWrite`
 * wraps each write, for an adapter whose reader must step aside (SQLite's snapshot).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (
  dialect: SqlDialect.Make,
  options?: { readonly aroundWrite?: <A, E, R>(write: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> }
): Effect.Effect<WebhookStore.WebhookStore, never, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { instant, epochMillis, boolean, writeLock, skipLocked, claimLock } = dialect(sql)
    const aroundWrite = options?.aroundWrite ?? (<A, E, R>(write: Effect.Effect<A, E, R>) => write)

    const mapped = <A, E, R>(
      effect: Effect.Effect<A, E | SqlError, R>
    ): Effect.Effect<A, Exclude<E, SqlError> | FileDataError.StorageUnavailable, R> =>
      effect.pipe(
        Effect.catchIf(
          (error): error is SqlError => error instanceof SqlError,
          (error) => Effect.fail(unavailable(error))
        ),
        Effect.catchSomeDefect((defect) =>
          defect instanceof SqlError ? Option.some(Effect.fail(unavailable(defect))) : Option.none()
        )
      )
    const transaction = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>) =>
      aroundWrite(mapped(sql.withTransaction(Effect.zipRight(writeLock, effect))))

    const webhookColumns = sql`w.id AS id, w.file_id AS file_id, f.user_id AS user_id, w.url AS url,
      w.enabled AS enabled, ${epochMillis("w.created_at")} AS created_at, w.disabled_reason AS disabled_reason`
    const selectWebhooks = sql`SELECT ${webhookColumns} FROM webhooks AS w JOIN files AS f ON f.id = w.file_id`
    const order = sql`ORDER BY w.created_at, w.id`

    const findRow = (id: string) =>
      Effect.map(sql<WebhookRow>`${selectWebhooks} WHERE w.id = ${id}`, (rows) => Option.map(Arr.head(rows), toWebhook))

    // Pending events of a disabled webhook are given up: enabling it again sends only events created after.
    const giveUp = (id: string) =>
      sql`UPDATE webhook_events SET state = 'failed', next_attempt_at = NULL
        WHERE webhook_id = ${id} AND state = 'pending'`

    // Moves one claimed event on and logs its attempt; inside `record`'s transaction.
    const recordOne = (claim: WebhookStore.Claim, result: WebhookStore.AttemptResult) =>
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
          yield* giveUp(claim.webhookId)
        }
      })

    return {
      ownerOfKey: (apiKey) =>
        mapped(
          Effect.map(
            sql<{ readonly user_id: string }>`SELECT user_id FROM api_keys
              WHERE key_hash = ${hashKey(apiKey)} AND revoked_at IS NULL`,
            (rows) => Option.map(Arr.head(rows), (row) => FileData.UserId.make(row.user_id))
          )
        ),

      create: (webhook) =>
        transaction(
          Effect.gen(function* () {
            const [count] = yield* sql<{ readonly n: number | string }>`SELECT COUNT(*) AS n FROM webhooks
              WHERE file_id = ${webhook.fileId}`
            if (Number(count?.n ?? 0) >= Webhook.maxPerFile) {
              return yield* new Webhook.WebhookLimitReached({ limit: Webhook.maxPerFile })
            }
            const id = webhookId()
            const now = yield* Clock.currentTimeMillis
            const sealed = yield* webhook.sealSecret(id)
            yield* sql`INSERT INTO webhooks (id, file_id, url, secret, enabled, created_at)
              VALUES (${id}, ${webhook.fileId}, ${webhook.url}, ${sealed}, ${boolean(true)},
                ${instant(now)})`
            const found = yield* findRow(id)
            return yield* Option.match(found, {
              onNone: () => Effect.die(new Error("a webhook just inserted is not found")),
              onSome: Effect.succeed
            })
          })
        ),

      list: ({ ownerId, fileId }) =>
        mapped(
          Effect.map(
            Option.match(fileId, {
              onNone: () => sql<WebhookRow>`${selectWebhooks} WHERE f.user_id = ${ownerId} ${order}`,
              onSome: (id) =>
                sql<WebhookRow>`${selectWebhooks} WHERE f.user_id = ${ownerId} AND w.file_id = ${id} ${order}`
            }),
            (rows) => rows.map(toWebhook)
          )
        ),

      listAll: (fileId) =>
        mapped(
          Effect.map(
            Option.match(fileId, {
              onNone: () => sql<WebhookRow>`${selectWebhooks} ${order}`,
              onSome: (id) => sql<WebhookRow>`${selectWebhooks} WHERE w.file_id = ${id} ${order}`
            }),
            (rows) => rows.map(toWebhook)
          )
        ),

      find: (id) => mapped(findRow(id)),

      remove: (id) =>
        transaction(
          Effect.gen(function* () {
            yield* sql`DELETE FROM webhook_attempts WHERE webhook_id = ${id}`
            yield* sql`DELETE FROM webhook_events WHERE webhook_id = ${id}`
            const rows = yield* sql<{ readonly id: string }>`DELETE FROM webhooks WHERE id = ${id} RETURNING id`
            return rows.length > 0
          })
        ),

      enable: (id) =>
        transaction(
          Effect.zipRight(
            sql`UPDATE webhooks SET enabled = ${boolean(true)}, disabled_reason = NULL, failing_since = NULL
              WHERE id = ${id}`,
            findRow(id)
          )
        ),

      disable: (id, reason) =>
        transaction(
          Effect.gen(function* () {
            yield* sql`UPDATE webhooks SET enabled = ${boolean(false)}, disabled_reason = ${reason} WHERE id = ${id}`
            yield* giveUp(id)
            return yield* findRow(id)
          })
        ),

      rotateSecret: (id, sealedSecret, previousUntil) =>
        transaction(
          Effect.map(
            sql<{ readonly id: string }>`UPDATE webhooks SET previous_secret = secret,
              previous_secret_until = ${instant(previousUntil)}, secret = ${sealedSecret}
              WHERE id = ${id} RETURNING id`,
            (rows) => rows.length > 0
          )
        ),

      deliveries: (id, limit) =>
        mapped(
          Effect.map(
            sql<DeliveryRow>`SELECT event_id, attempt, ${epochMillis("at")} AS at, status, outcome, error, duration_ms,
                ${epochMillis("next_attempt_at")} AS next_attempt_at
              FROM webhook_attempts WHERE webhook_id = ${id} ORDER BY seq DESC LIMIT ${limit}`,
            (rows) => rows.map(toDelivery)
          )
        ),

      redeliver: (id, eventId) =>
        transaction(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const rows = yield* sql<{ readonly id: string }>`UPDATE webhook_events
              SET state = 'pending', step = 0, next_attempt_at = ${instant(now)}
              WHERE webhook_id = ${id} AND id = ${eventId} RETURNING id`
            return rows.length > 0
          })
        ),

      // One statement leases the events, so two deliverers never get the same one: PostgreSQL passes over rows
      // another claim has locked (SKIP LOCKED) and re-checks the lease on those it waited for; SQLite runs one
      // writer at a time. No transaction stays open after it: the HTTP call happens outside.
      claim: ({ leaseMillis, limit }) =>
        aroundWrite(
          mapped(
            sql.withTransaction(
              Effect.zipRight(
                claimLock,
                Effect.gen(function* () {
                  const now = yield* Clock.currentTimeMillis
                  const token = randomBytes(12).toString("base64url")
                  const claimed = yield* sql<ClaimedRow>`UPDATE webhook_events
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
                  if (claimed.length === 0) return []
                  const details = yield* sql<DetailsRow>`SELECT id, url, secret, previous_secret,
                  ${epochMillis("previous_secret_until")} AS previous_secret_until,
                  ${epochMillis("failing_since")} AS failing_since
                FROM webhooks WHERE ${sql.in("id", Arr.dedupe(claimed.map((row) => row.webhook_id)))}`
                  const byId = new Map(details.map((row) => [row.id, row]))
                  return claimed
                    .map((row): WebhookStore.Claim | undefined => {
                      const webhook = byId.get(row.webhook_id)
                      if (webhook === undefined) return undefined
                      const previousUntil = Number(webhook.previous_secret_until)
                      return {
                        eventId: row.id,
                        webhookId: row.webhook_id,
                        url: webhook.url,
                        body: row.body,
                        secrets: {
                          current: webhook.secret,
                          previous:
                            webhook.previous_secret !== null && previousUntil > now
                              ? Option.some({ sealed: webhook.previous_secret, until: previousUntil })
                              : Option.none()
                        },
                        attempt: Number(row.attempts),
                        step: Number(row.step),
                        failingSince: Option.map(Option.fromNullable(webhook.failing_since), Number),
                        leaseToken: token
                      }
                    })
                    .filter((claim): claim is WebhookStore.Claim => claim !== undefined)
                })
              )
            )
          )
        ),

      record: (attempts) =>
        attempts.length === 0
          ? Effect.void
          : transaction(Effect.forEach(attempts, ({ claim, result }) => recordOne(claim, result), { discard: true })),

      backlog: mapped(
        Effect.map(
          Effect.all([
            sql<{ readonly waiting: number | string }>`SELECT COUNT(*) AS waiting FROM webhook_events
              WHERE state = 'pending'`,
            sql<{ readonly oldest: Millis }>`SELECT ${epochMillis("created_at")} AS oldest FROM webhook_events
              WHERE state = 'pending' ORDER BY created_at LIMIT 1`
          ]),
          ([[count], [oldest]]) => ({
            waiting: Number(count?.waiting ?? 0),
            oldestCreatedAt: Option.map(Option.fromNullable(oldest), (row) => Number(row.oldest))
          })
        )
      )
    } satisfies WebhookStore.WebhookStore
  })
