/**
 * The port that makes one delivery attempt of a webhook event: signs it (Standard Webhooks), sends it to the
 * receiver over HTTP, and says how the receiver answered. It never fails: every outcome is a value.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/**
 * A webhook URL the sender will not call: its scheme, credentials, length, or a host that is or resolves to a
 * non-global address while private networks are not allowed. `reason` is shown to the owner in a 422.
 *
 * @since 0.2.0
 * @category errors
 */
export class WebhookUrlRefused extends Schema.TaggedError<WebhookUrlRefused>()("WebhookUrlRefused", {
  reason: Schema.String
}) {}

/**
 * One attempt to make: the event's id (`webhook-id`), its JSON body, and the secrets to sign with (`whsec_...`,
 * two during a rotation's overlap). The sender adds `webhook-timestamp` at the moment it sends.
 *
 * @since 0.2.0
 * @category models
 */
export interface Attempt {
  readonly url: string
  readonly eventId: string
  readonly body: string
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
  readonly timeoutMillis: number
}

/**
 * Why no HTTP status came back.
 *
 * @since 0.2.0
 * @category models
 */
export type FailureClass =
  | "address_refused" // the resolved address is not a global one, and private networks are not allowed
  | "dns" // the host did not resolve
  | "connection" // refused, reset, or closed before an answer
  | "tls" // the TLS handshake or the certificate failed
  | "timeout" // no complete answer within `timeoutMillis`
  | "invalid_url" // not a URL the sender may call (scheme, credentials, length)

/**
 * How an attempt ended.
 *
 * @since 0.2.0
 * @category models
 */
export type Outcome =
  | {
      readonly _tag: "Answered"
      /** The receiver's status; a redirect is an answer too, and never followed. */
      readonly status: number
      /** `Retry-After` of a 429 or 503, when present and valid. */
      readonly retryAfterMillis: Option.Option<number>
      readonly durationMillis: number
    }
  | {
      readonly _tag: "NotAnswered"
      readonly failure: FailureClass
      /** A short description safe to log and to show the owner: never the URL's query, a secret or a raw body. */
      readonly detail: string
      readonly durationMillis: number
    }

/**
 * @since 0.2.0
 * @category models
 */
export interface WebhookSenderShape {
  /** The registration check: the same rules `send` applies, so a URL accepted here is one it may call. */
  readonly check: (url: string) => Effect.Effect<void, WebhookUrlRefused>
  readonly send: (attempt: Attempt) => Effect.Effect<Outcome>
}

/**
 * @since 0.2.0
 * @category tags
 */
export class WebhookSender extends Context.Tag("@filedata/core/WebhookSender")<WebhookSender, WebhookSenderShape>() {}
