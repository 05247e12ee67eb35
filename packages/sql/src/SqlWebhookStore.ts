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
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Deliveries from "./internal/deliveries.js"
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
    const engine = dialect(sql)
    const { instant, epochMillis, boolean, writeLock, claimLock } = engine
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

    const deliveries = Deliveries.make(sql, engine)

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
            yield* Deliveries.giveUp(sql, id)
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
      claim: (options) =>
        aroundWrite(mapped(sql.withTransaction(Effect.zipRight(claimLock, deliveries.claim(options))))),

      record: (attempts) =>
        attempts.length === 0
          ? Effect.void
          : transaction(
              Effect.forEach(attempts, ({ claim, result }) => deliveries.record(claim, result), { discard: true })
            ),

      backlog: mapped(deliveries.backlog)
    } satisfies WebhookStore.WebhookStore
  })
