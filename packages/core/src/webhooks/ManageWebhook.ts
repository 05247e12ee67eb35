/**
 * The operations on one webhook of the caller's, named by `id`: delete it, enable it again, rotate its secret,
 * read its deliveries log, redeliver one of its events.
 *
 * @since 0.2.0
 */

import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as RequestSchema from "../shared/RequestSchema.js"
import * as TextRules from "../shared/TextRules.js"
import { type Delivery, rotationOverlapMillis, type Webhook, WebhookEventNotFound, WebhookNotFound } from "./Webhook.js"
import * as WebhookRequest from "./WebhookRequest.js"
import type * as WebhookSecrets from "./WebhookSecrets.js"

/**
 * The most entries a deliveries reply holds, and how many it holds when the request gives no `limit`.
 *
 * @since 0.2.0
 * @category constants
 */
export const deliveriesLimit = { max: 1000, default: 100 } as const

const target = {
  apiKey: RequestSchema.apiKeyField,
  id: TextRules.Id.annotations({ title: "Webhook id", description: "The id create answered with" })
}

/**
 * The body of `delete`, `enable` and `rotate-secret`; any other member is refused.
 *
 * @since 0.2.0
 * @category schemas
 */
export const WebhookTargetRequest = Schema.Struct(target).annotations({ identifier: "WebhookTargetRequest" })

/**
 * The body of `deliveries`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const DeliveriesRequest = Schema.Struct({
  ...target,
  limit: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1, deliveriesLimit.max)).annotations({
      description: `At most this many attempts (default ${deliveriesLimit.default})`
    }),
    {
      exact: true,
      default: () => deliveriesLimit.default
    }
  )
}).annotations({ identifier: "DeliveriesRequest" })

/**
 * The body of `redeliver`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const RedeliverRequest = Schema.Struct({
  ...target,
  eventId: TextRules.Id.annotations({ title: "Event id", description: "The event's webhook-id, as the log shows it" })
}).annotations({
  identifier: "RedeliverRequest"
})

const parseTarget = WebhookRequest.parser(WebhookTargetRequest)
const parseDeliveries = WebhookRequest.parser(DeliveriesRequest, {
  limit: `must be an integer from 1 to ${deliveriesLimit.max}`
})
const parseRedeliver = WebhookRequest.parser(RedeliverRequest)

const found = <A>(option: Option.Option<A>): Effect.Effect<A, WebhookNotFound> =>
  Option.match(option, { onNone: () => Effect.fail(new WebhookNotFound()), onSome: Effect.succeed })

/**
 * Deletes the webhook with its events and log: nothing more is delivered to it.
 *
 * @since 0.2.0
 * @category use cases
 */
export const remove: WebhookRequest.Operation<void> = WebhookRequest.onWebhook(parseTarget, (ports, webhook) =>
  Effect.gen(function* () {
    // Deleted meanwhile by another request: the same answer as if it had never been.
    if (!(yield* ports.webhooks.remove(webhook.id))) return yield* new WebhookNotFound()
  })
)

/**
 * Enables the webhook again; events created while it was disabled are not sent.
 *
 * @since 0.2.0
 * @category use cases
 */
export const enable: WebhookRequest.Operation<Webhook> = WebhookRequest.onWebhook(parseTarget, (ports, webhook) =>
  Effect.flatMap(ports.webhooks.enable(webhook.id), found)
)

/**
 * A new secret for the webhook, shown this once; the one it replaces signs too for `rotationOverlapMillis`.
 *
 * @since 0.2.0
 * @category use cases
 */
export const rotateSecret: WebhookRequest.Operation<
  { readonly id: string; readonly secret: Redacted.Redacted<string> },
  WebhookRequest.ManageError,
  WebhookRequest.Ports & { readonly secrets: WebhookSecrets.WebhookSecretsShape }
> = WebhookRequest.onWebhook(parseTarget, (ports, webhook) =>
  Effect.gen(function* () {
    const secret = yield* ports.secrets.generate
    const sealed = yield* ports.secrets.seal(secret, webhook.id)
    const now = yield* Clock.currentTimeMillis
    if (!(yield* ports.webhooks.rotateSecret(webhook.id, sealed, now + rotationOverlapMillis))) {
      return yield* new WebhookNotFound()
    }
    return { id: webhook.id, secret }
  })
)

/**
 * The webhook's last attempts, newest first.
 *
 * @since 0.2.0
 * @category use cases
 */
export const deliveries: WebhookRequest.Operation<ReadonlyArray<Delivery>> = WebhookRequest.onWebhook(
  parseDeliveries,
  (ports, webhook, request) => ports.webhooks.deliveries(webhook.id, request.limit)
)

/**
 * Sends one of the webhook's events again under the same id, at once, then on the retry schedule.
 *
 * @since 0.2.0
 * @category use cases
 */
export const redeliver: WebhookRequest.Operation<void, WebhookRequest.ManageError | WebhookEventNotFound> =
  WebhookRequest.onWebhook(parseRedeliver, (ports, webhook, request) =>
    Effect.gen(function* () {
      if (!(yield* ports.webhooks.redeliver(webhook.id, request.eventId))) return yield* new WebhookEventNotFound()
    })
  )

/**
 * The requests as a client sends them, marked with the operations' readings (`RequestSchema.readBy`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const RequestJson = {
  target: RequestSchema.readBy(Schema.encodedBoundSchema(WebhookTargetRequest), parseTarget),
  deliveries: RequestSchema.readBy(Schema.encodedBoundSchema(DeliveriesRequest), parseDeliveries),
  redeliver: RequestSchema.readBy(Schema.encodedBoundSchema(RedeliverRequest), parseRedeliver)
}
