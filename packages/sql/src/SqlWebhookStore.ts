/**
 * The `WebhookStore` port over an @effect/sql client, for any engine a `SqlDialect` describes. Events are
 * written by the append's own transaction (`SqlOperatorStore`); here they are claimed, recorded and managed.
 *
 * @since 0.2.0
 */
import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { FileData, type FileDataError, Webhook, type WebhookStore } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Rows from "./internal/rows.js"
import { hashKey } from "./KeyHash.js"
import type * as SqlDialect from "./SqlDialect.js"
import { unavailable } from "./StorageFailure.js"

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

    // Every SQL failure as the port's; a row that does not decode is a defect (`Rows.orDieOnRow`).
    const mapped = <A, E, R>(
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A, Exclude<E, SqlError | Rows.RowFailure> | FileDataError.StorageUnavailable, R> =>
      Rows.orDieOnRow(effect).pipe(
        Effect.catchIf(
          (error: unknown) => error instanceof SqlError,
          (error) => Effect.fail(unavailable(error))
        ),
        Effect.catchSomeDefect((defect) =>
          defect instanceof SqlError ? Option.some(Effect.fail(unavailable(defect))) : Option.none()
        )
      ) as Effect.Effect<A, Exclude<E, SqlError | Rows.RowFailure> | FileDataError.StorageUnavailable, R>
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      aroundWrite(mapped(sql.withTransaction(Effect.zipRight(writeLock, effect))))

    const webhookColumns = sql`w.id AS id, w.file_id AS file_id, f.user_id AS user_id, w.url AS url,
      w.enabled AS enabled, ${epochMillis("w.created_at")} AS created_at, w.disabled_reason AS disabled_reason`
    const selectWebhooks = sql`SELECT ${webhookColumns} FROM webhooks AS w JOIN files AS f ON f.id = w.file_id`
    const order = sql`ORDER BY w.created_at, w.id`

    const findRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: Rows.WebhookRow,
      execute: (id) => sql`${selectWebhooks} WHERE w.id = ${id}`
    })
    const listRows = SqlSchema.findAll({
      Request: Schema.Struct({
        ownerId: Schema.OptionFromSelf(Schema.String),
        fileId: Schema.OptionFromSelf(Schema.String)
      }),
      Result: Rows.WebhookRow,
      execute: ({ ownerId, fileId }) => {
        const conditions = [
          ...Option.toArray(Option.map(ownerId, (id) => sql`f.user_id = ${id}`)),
          ...Option.toArray(Option.map(fileId, (id) => sql`w.file_id = ${id}`))
        ]
        return sql`${selectWebhooks} ${conditions.length === 0 ? sql.literal("") : sql`WHERE ${sql.and(conditions)}`} ${order}`
      }
    })
    const deliveryRows = SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.String, limit: Schema.Number }),
      Result: Rows.DeliveryRow,
      execute: ({ id, limit }) =>
        sql`SELECT event_id, attempt, ${epochMillis("at")} AS at, status, outcome, error, duration_ms,
            ${epochMillis("next_attempt_at")} AS next_attempt_at
          FROM webhook_attempts WHERE webhook_id = ${id} ORDER BY seq DESC LIMIT ${limit}`
    })
    const ownerRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ user_id: Schema.typeSchema(FileData.UserId) }),
      execute: (keyHash) => sql`SELECT user_id FROM api_keys WHERE key_hash = ${keyHash} AND revoked_at IS NULL`
    })
    // A count is one row, of a number or int8 text.
    const webhookCount = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ n: Rows.Int }),
      execute: (fileId) => sql`SELECT COUNT(*) AS n FROM webhooks WHERE file_id = ${fileId}`
    })
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
            ownerRow(hashKey(apiKey)),
            Option.map((row) => row.user_id)
          )
        ),

      create: (webhook) =>
        transaction(
          Effect.gen(function* () {
            const count = yield* webhookCount(webhook.fileId)
            if (count.n >= Webhook.maxPerFile) {
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

      list: ({ ownerId, fileId }) => mapped(listRows({ ownerId: Option.some(ownerId), fileId })),

      listAll: (fileId) => mapped(listRows({ ownerId: Option.none(), fileId })),

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

      deliveries: (id, limit) => mapped(deliveryRows({ id, limit })),

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
              )
            )
          )
        ),

      record: (attempts) =>
        attempts.length === 0
          ? Effect.void
          : transaction(Effect.forEach(attempts, ({ claim, result }) => recordOne(claim, result), { discard: true })),

      backlog: mapped(
        Effect.all({
          waiting: Effect.map(pendingCount(undefined), (row) => row.n),
          oldestCreatedAt: Effect.map(
            oldestPending(undefined),
            Option.map((row) => row.oldest)
          )
        })
      )
    } satisfies WebhookStore.WebhookStore
  })
