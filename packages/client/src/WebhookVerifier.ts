/**
 * The receiver's side of filedata's webhooks: checks that a delivery was signed with the webhook's secret
 * (Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`), that it was sent within the last 5
 * minutes, and decodes its body into a typed event: `submissions.created` or `submissions.erased`.
 *
 * Only WebCrypto (`globalThis.crypto.subtle`) and `TextEncoder`: no Node module, so it runs in Node, Deno, Bun,
 * browsers and edge runtimes alike. The signature is checked with `subtle.verify`, which compares in constant
 * time, against every `v1,` entry of the header (two during a secret's rotation).
 *
 * @since 0.2.0
 */
import { FileData as Domain, SubmissionId, SubmissionsReply, Webhook } from "@filedata/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/**
 * The body of a `submissions.created` delivery: the submissions one append added to one file (at most 100 per
 * event, ascending `createdDate`, each with its id), the file's counters after the append, `next`, the cursor of
 * `POST /api/v1/file-data/submissions` after the latest of them, and `changesNext` (since 0.3.0), the cursor of
 * the change feed `POST /api/v1/file-data/changes` after the event's last change: a receiver that missed events
 * catches up there with nothing missed.
 *
 * @since 0.2.0
 * @category schemas
 */
export const SubmissionsCreated = Schema.Struct({
  type: Schema.Literal(Webhook.eventType),
  timestamp: Domain.Timestamp,
  data: Schema.Struct({
    fileId: Schema.String,
    SubmissionCounter: Domain.Count,
    VisitCounter: Domain.Count,
    submissions: Schema.Array(SubmissionsReply.IdentifiedSubmission),
    next: Schema.String,
    changesNext: Schema.String
  })
}).annotations({ identifier: "SubmissionsCreated" })

/**
 * @since 0.2.0
 * @category models
 */
export type SubmissionsCreated = typeof SubmissionsCreated.Type

/**
 * The body of a `submissions.erased` delivery: the ids an operator erased from one file (at most 1000 per event),
 * the file's counters after the erasure, and `changesNext`, the change feed's cursor after their changes.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SubmissionsErased = Schema.Struct({
  type: Schema.Literal(Webhook.erasedEventType),
  timestamp: Domain.Timestamp,
  data: Schema.Struct({
    fileId: Schema.String,
    SubmissionCounter: Domain.Count,
    VisitCounter: Domain.Count,
    ids: Schema.Array(SubmissionId.SubmissionId),
    changesNext: Schema.String
  })
}).annotations({ identifier: "SubmissionsErased" })

/**
 * @since 0.3.0
 * @category models
 */
export type SubmissionsErased = typeof SubmissionsErased.Type

/**
 * Every event a webhook receives, told apart by `type`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const WebhookEvent = Schema.Union(SubmissionsCreated, SubmissionsErased)

/**
 * @since 0.3.0
 * @category models
 */
export type WebhookEvent = typeof WebhookEvent.Type

/**
 * Why a delivery was refused. Answer it with a 4xx and do not act on it.
 *
 * @since 0.2.0
 * @category errors
 */
export class WebhookVerificationError extends Schema.TaggedError<WebhookVerificationError>()(
  "WebhookVerificationError",
  {
    reason: Schema.Literal(
      "missing_headers",
      "invalid_timestamp",
      "stale_timestamp",
      "invalid_signature",
      "invalid_body"
    ),
    message: Schema.String
  }
) {}

/**
 * A delivery as the receiver got it: its header fields (a `Headers` or a record with lower-case names, as Node
 * gives them) and its body exactly as received, as text or bytes.
 *
 * @since 0.2.0
 * @category models
 */
export interface Delivery {
  readonly headers: Headers | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: string | Uint8Array
}

/**
 * A delivery whose signature and timestamp hold: `id` is the event's id, the same on every attempt, by which a
 * receiver drops repeats.
 *
 * @since 0.2.0
 * @category models
 */
export interface Authenticated {
  readonly id: string
  readonly timestampSeconds: number
  readonly body: string
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Verified extends Omit<Authenticated, "body"> {
  /** Since 0.3.0 a `submissions.erased` event too: tell them apart by `type`. */
  readonly event: WebhookEvent
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Verifier {
  /** Signature and timestamp only; the body is handed back as text. */
  readonly authenticate: (delivery: Delivery) => Effect.Effect<Authenticated, WebhookVerificationError>
  /** Signature, timestamp, and the body decoded into an event. */
  readonly verify: (delivery: Delivery) => Effect.Effect<Verified, WebhookVerificationError>
}

/**
 * How far a delivery's timestamp may be from the receiver's clock, either way: 5 minutes, as the reference
 * libraries.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultToleranceSeconds = 300

const encoder = new TextEncoder()

const header = (headers: Delivery["headers"], name: string): string | undefined => {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined
  const value = (headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>)[name]
  return typeof value === "string" ? value : value?.join(" ")
}

const fromBase64 = (text: string): Uint8Array<ArrayBuffer> | undefined => {
  try {
    const binary = atob(text)
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  } catch {
    return undefined
  }
}

const refuse = (reason: WebhookVerificationError["reason"], message: string) =>
  new WebhookVerificationError({ reason, message })

/**
 * A verifier for a webhook's secrets (`whsec_...`, as `create` and `rotate-secret` showed them; during a rotation
 * give both, so deliveries signed with either pass). Fails with `Error` for a secret that is not base64.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: {
  readonly secrets: ReadonlyArray<string | Redacted.Redacted<string>>
  readonly toleranceSeconds?: number
}): Effect.Effect<Verifier, Error> =>
  Effect.gen(function* () {
    const tolerance = options.toleranceSeconds ?? defaultToleranceSeconds
    const keys = yield* Effect.forEach(options.secrets, (secret) => {
      const text = Redacted.isRedacted(secret) ? Redacted.value(secret) : secret
      const bytes = fromBase64(text.startsWith("whsec_") ? text.slice("whsec_".length) : text)
      return bytes === undefined || bytes.length === 0
        ? Effect.fail(new Error("a webhook secret is whsec_ followed by base64"))
        : Effect.promise(() =>
            globalThis.crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"])
          )
    })

    const authenticate = (delivery: Delivery): Effect.Effect<Authenticated, WebhookVerificationError> =>
      Effect.gen(function* () {
        const id = header(delivery.headers, "webhook-id")
        const timestamp = header(delivery.headers, "webhook-timestamp")
        const signatures = header(delivery.headers, "webhook-signature")
        if (id === undefined || timestamp === undefined || signatures === undefined) {
          return yield* refuse("missing_headers", "webhook-id, webhook-timestamp and webhook-signature are required")
        }
        if (!/^\d{1,15}$/.test(timestamp)) {
          return yield* refuse("invalid_timestamp", "webhook-timestamp is not a number of seconds")
        }
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const timestampSeconds = Number(timestamp)
        if (Math.abs(now - timestampSeconds) > tolerance) {
          return yield* refuse("stale_timestamp", `webhook-timestamp is more than ${tolerance} s from now`)
        }
        const body = typeof delivery.body === "string" ? encoder.encode(delivery.body) : delivery.body
        const prefix = encoder.encode(`${id}.${timestamp}.`)
        const signed = new Uint8Array(prefix.length + body.length)
        signed.set(prefix)
        signed.set(body, prefix.length)
        const candidates = signatures
          .split(" ")
          .filter((entry) => entry.startsWith("v1,"))
          .map((entry) => fromBase64(entry.slice(3)))
          .filter((bytes) => bytes !== undefined)
        const matches = yield* Effect.promise(async () => {
          for (const candidate of candidates) {
            for (const key of keys) {
              if (await globalThis.crypto.subtle.verify("HMAC", key, candidate, signed)) return true
            }
          }
          return false
        })
        if (!matches) return yield* refuse("invalid_signature", "no webhook-signature entry matches a secret")
        const text = typeof delivery.body === "string" ? Either.right(delivery.body) : utf8(delivery.body)
        if (Either.isLeft(text)) return yield* refuse("invalid_body", "the body is not UTF-8")
        return { id, timestampSeconds, body: text.right }
      })

    const verify = (delivery: Delivery): Effect.Effect<Verified, WebhookVerificationError> =>
      Effect.flatMap(authenticate(delivery), ({ body, id, timestampSeconds }) =>
        Effect.try({ try: () => JSON.parse(body) as unknown, catch: () => refuse("invalid_body", "not JSON") }).pipe(
          Effect.flatMap((json) =>
            Schema.decodeUnknown(WebhookEvent)(json).pipe(
              Effect.mapError((error) =>
                refuse("invalid_body", `not a filedata event: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
              )
            )
          ),
          Effect.map((event) => ({ id, timestampSeconds, event }))
        )
      )

    return { authenticate, verify }
  })

const utf8 = (bytes: Uint8Array): Either.Either<string, void> => {
  try {
    return Either.right(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch {
    return Either.left(undefined)
  }
}

/**
 * Verifies one delivery with a webhook's secrets and decodes its event: {@link make} and `verify` at once.
 *
 * @since 0.2.0
 * @category verifying
 */
export const verify = (
  secrets: string | Redacted.Redacted<string> | ReadonlyArray<string | Redacted.Redacted<string>>,
  delivery: Delivery
): Effect.Effect<Verified, WebhookVerificationError | Error> =>
  Effect.flatMap(
    make({ secrets: typeof secrets === "string" || Redacted.isRedacted(secrets) ? [secrets] : secrets }),
    (verifier) => verifier.verify(delivery)
  )
