/**
 * The tables both SQL adapters create alike, written once in each engine's `SqlMigrations.ColumnTypes`: each
 * file's content names (`ContentNames`) and the webhooks' registrations, outbox and attempts (`SqlWebhookStore`).
 * Part of each adapter's initial schema.
 *
 * @since 0.2.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type * as SqlMigrations from "./SqlMigrations.js"

/**
 * Creates the tables, after `files`, which they reference.
 *
 * @since 0.2.0
 * @category migrations
 */
export const create = (sql: SqlClient.SqlClient, types: SqlMigrations.ColumnTypes): Effect.Effect<void, SqlError> =>
  Effect.gen(function* () {
    // `seq` is a submission of the transaction that brought the name, so a reader bounded by a read point sees
    // the names of exactly the submissions it sees.
    yield* sql.unsafe(`CREATE TABLE content_names (
    file_id ${types.text} NOT NULL REFERENCES files (id),
    position ${types.int4} NOT NULL,
    name ${types.text} NOT NULL,
    seq ${types.int8} NOT NULL,
    PRIMARY KEY (file_id, position),
    UNIQUE (file_id, name)
  )${types.tableOptions}`)
    yield* sql.unsafe(`CREATE TABLE webhooks (
    id ${types.textKey},
    file_id ${types.text} NOT NULL REFERENCES files (id),
    url ${types.text} NOT NULL,
    secret ${types.text} NOT NULL,
    previous_secret ${types.text},
    previous_secret_until ${types.instant},
    enabled ${types.boolean("enabled")},
    disabled_reason ${types.text},
    failing_since ${types.instant},
    created_at ${types.instant} NOT NULL
  )${types.tableOptions}`)
    yield* sql`CREATE INDEX webhooks_file_id ON webhooks (file_id)`
    // seq is event order; a claim takes the first pending event of each webhook, by the partial index.
    yield* sql.unsafe(`CREATE TABLE webhook_events (
    seq ${types.serialKey},
    id ${types.text} NOT NULL UNIQUE,
    webhook_id ${types.text} NOT NULL REFERENCES webhooks (id),
    body ${types.text} NOT NULL,
    created_at ${types.instant} NOT NULL,
    state ${types.text} NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    step ${types.int4} NOT NULL,
    attempts ${types.int4} NOT NULL,
    next_attempt_at ${types.instant},
    lease_until ${types.instant},
    lease_token ${types.text}
  )${types.tableOptions}`)
    yield* sql`CREATE INDEX webhook_events_pending ON webhook_events (webhook_id, seq) WHERE state = 'pending'`
    yield* sql`CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE state = 'pending'`
    yield* sql.unsafe(`CREATE TABLE webhook_attempts (
    seq ${types.serialKey},
    webhook_id ${types.text} NOT NULL REFERENCES webhooks (id),
    event_id ${types.text} NOT NULL,
    attempt ${types.int4} NOT NULL,
    at ${types.instant} NOT NULL,
    status ${types.int4},
    outcome ${types.text} NOT NULL,
    error ${types.text},
    duration_ms ${types.int4} NOT NULL,
    next_attempt_at ${types.instant}
  )${types.tableOptions}`)
    yield* sql`CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, seq)`
  })
