// The rows of the webhook and operator stores as `effect/Schema` schemas, decoded by `@effect/sql`'s `SqlSchema`
// into the ports' models. The columns arrive in each engine's form: integers as numbers, or as int8 text from
// PostgreSQL; booleans as booleans, or as 0 and 1 from SQLite; instants as epoch milliseconds (`SqlDialect`).
import { FileData, Webhook } from "@filedata/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * An integer column: a number, or int8 text; every value here is a safe integer.
 *
 * @internal
 */
export const Int = Schema.Union(Schema.Number, Schema.NumberFromString)

/**
 * An int8 key as text, however the driver hands it over.
 *
 * @internal
 */
export const KeyText = Schema.transform(Schema.Union(Schema.String, Schema.Number), Schema.String, {
  strict: true,
  decode: String,
  encode: (text) => text
})

/**
 * An instant column, epoch milliseconds, as the reply shows it.
 *
 * @internal
 */
export const Instant = Schema.transform(Int, Schema.typeSchema(FileData.Timestamp), {
  strict: true,
  decode: FileData.timestampFromEpochMillis,
  encode: Date.parse
})

/**
 * A boolean column.
 *
 * @internal
 */
export const Flag = Schema.Union(
  Schema.Boolean,
  Schema.transform(Schema.Literal(0, 1), Schema.Boolean, {
    strict: true,
    decode: (bit) => bit === 1,
    encode: (flag) => (flag ? 1 : 0)
  })
)

const column = <K extends string, A, I, R>(name: K, schema: Schema.Schema<A, I, R>) =>
  Schema.propertySignature(schema).pipe(Schema.fromKey(name))

/**
 * A webhook with its file's owner, as `SqlWebhookStore` selects it.
 *
 * @internal
 */
export const WebhookRow = Schema.Struct({
  id: Schema.String,
  fileId: column("file_id", Schema.typeSchema(FileData.FileId)),
  ownerId: column("user_id", Schema.typeSchema(FileData.UserId)),
  url: Schema.String,
  enabled: Flag,
  createdAt: column("created_at", Instant),
  disabledReason: column("disabled_reason", Schema.OptionFromNullOr(Webhook.DisabledReason))
})

/**
 * One attempt of the deliveries log.
 *
 * @internal
 */
export const DeliveryRow = Schema.Struct({
  eventId: column("event_id", Schema.String),
  attempt: Int,
  at: Instant,
  status: Schema.OptionFromNullOr(Int),
  outcome: Webhook.DeliveryOutcome,
  error: Schema.OptionFromNullOr(Schema.String),
  durationMillis: column("duration_ms", Int),
  nextAttemptAt: column("next_attempt_at", Schema.OptionFromNullOr(Instant))
})

/**
 * An event a claim leased.
 *
 * @internal
 */
export const ClaimedRow = Schema.Struct({
  id: Schema.String,
  webhookId: column("webhook_id", Schema.String),
  body: Schema.String,
  attempts: Int,
  step: Int
})

/**
 * What a claimed event's webhook adds to it: where it goes, its sealed secrets and since when it fails.
 *
 * @internal
 */
export const ClaimDetailsRow = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  secret: Schema.String,
  previousSecret: column("previous_secret", Schema.NullOr(Schema.String)),
  previousSecretUntil: column("previous_secret_until", Schema.NullOr(Int)),
  failingSince: column("failing_since", Schema.OptionFromNullOr(Int))
})

/**
 * An API key as an operator sees it.
 *
 * @internal
 */
export const KeyRow = Schema.Struct({
  id: KeyText,
  userId: column("user_id", Schema.typeSchema(FileData.UserId)),
  prefix: column("key_prefix", Schema.OptionFromNullOr(Schema.String)),
  createdAt: column("created_at", Instant),
  revokedAt: column("revoked_at", Schema.OptionFromNullOr(Instant))
})

/**
 * A user with the counts an operator sees.
 *
 * @internal
 */
export const UserRow = Schema.Struct({
  id: Schema.typeSchema(FileData.UserId),
  activeKeys: column("active_keys", Int),
  files: Int
})

/**
 * What a row's decoding may fail with: a row the schema refuses, or no row where a statement always answers one.
 *
 * @internal
 */
export type RowFailure = ParseResult.ParseError | Cause.NoSuchElementException

const isRowFailure = (error: unknown): error is RowFailure =>
  ParseResult.isParseError(error) || Cause.isNoSuchElementException(error)

/**
 * A row that does not decode is a defect: storage holds only what the stores wrote, so it is a bug, not an outage.
 *
 * @internal
 */
export const orDieOnRow = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, RowFailure>, R> =>
  Effect.catchIf(effect, isRowFailure, Effect.die) as Effect.Effect<A, Exclude<E, RowFailure>, R>
