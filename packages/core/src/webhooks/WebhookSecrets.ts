/**
 * The port that makes webhook secrets and keeps them unreadable at rest: a new secret is 32 random bytes as
 * `whsec_` + base64, and what storage holds is that secret sealed under a key kept outside the database.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/**
 * A sealed secret could not be opened: another key, or a damaged value.
 *
 * @since 0.2.0
 * @category errors
 */
export class SecretUnreadable extends Schema.TaggedError<SecretUnreadable>()("SecretUnreadable", {
  reason: Schema.String
}) {}

/**
 * @since 0.2.0
 * @category models
 */
export interface WebhookSecretsShape {
  /** A fresh `whsec_` secret from a cryptographic random source. */
  readonly generate: Effect.Effect<Redacted.Redacted<string>>
  /**
   * The text storage keeps for a webhook's secret (authenticated encryption; a new nonce each call), bound to
   * the webhook's id: copied into another webhook's row, it does not open.
   */
  readonly seal: (secret: Redacted.Redacted<string>, webhookId: string) => Effect.Effect<string>
  readonly open: (sealed: string, webhookId: string) => Effect.Effect<Redacted.Redacted<string>, SecretUnreadable>
}

/**
 * @since 0.2.0
 * @category tags
 */
export class WebhookSecrets extends Context.Tag("@filedata/core/WebhookSecrets")<
  WebhookSecrets,
  WebhookSecretsShape
>() {}
