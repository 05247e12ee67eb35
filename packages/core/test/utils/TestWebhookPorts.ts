/**
 * Test layers of the webhook transport ports: a sender that refuses what is not `https://` or names a private
 * host and answers each attempt as `answer` says, and secrets sealed by a visible prefix.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { SecretUnreadable, type WebhookSecretsShape } from "../../src/webhooks/WebhookSecrets.js"
import {
  type Attempt,
  type Outcome,
  type WebhookSenderShape,
  WebhookUrlRefused
} from "../../src/webhooks/WebhookSender.js"

export const sender = (
  answer: (attempt: Attempt) => Effect.Effect<Outcome> = () =>
    Effect.succeed({ _tag: "Answered", status: 200, retryAfterMillis: Option.none(), durationMillis: 5 })
): WebhookSenderShape & { readonly sent: Array<Attempt> } => {
  const sent: Array<Attempt> = []
  return {
    sent,
    check: (url) =>
      !url.startsWith("https://")
        ? Effect.fail(new WebhookUrlRefused({ reason: "must use https" }))
        : url.startsWith("https://10.")
          ? Effect.fail(new WebhookUrlRefused({ reason: "resolves to a private address" }))
          : Effect.void,
    send: (attempt) => Effect.suspend(() => Effect.tap(answer(attempt), () => Effect.sync(() => sent.push(attempt))))
  }
}

export const secrets = (): WebhookSecretsShape => {
  let n = 0
  return {
    generate: Effect.sync(() => Redacted.make(`whsec_secret${++n}`)),
    // Bound to the webhook's id like the real seal: another webhook's sealed text does not open.
    seal: (secret, webhookId) => Effect.succeed(`sealed:${webhookId}:${Redacted.value(secret)}`),
    open: (sealed, webhookId) =>
      sealed.startsWith(`sealed:${webhookId}:`)
        ? Effect.succeed(Redacted.make(sealed.slice(`sealed:${webhookId}:`.length)))
        : Effect.fail(new SecretUnreadable({ reason: "not sealed by this key for this webhook" }))
  }
}
