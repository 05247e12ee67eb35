/**
 * Webhooks in a running service: the sender and the secrets' key of `@filedata/webhooks-node` from the
 * `WEBHOOK_*` settings, and the delivery loop (`DeliverWebhooks.run`), which runs unless `WEBHOOK_DELIVERY=false`.
 *
 * @since 0.2.0
 */
import {
  DeliverWebhooks,
  type SubmissionSignals,
  type WebhookSecrets,
  type WebhookSender,
  type WebhookStore
} from "@filedata/core"
import { HttpWebhookSender, SealedSecrets } from "@filedata/webhooks-node"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ServiceConfig from "./ServiceConfig.js"

/**
 * Whether this instance delivers webhook events, for `/health`.
 *
 * @since 0.2.0
 * @category tags
 */
export class Delivery extends Context.Tag("@filedata/runtime/Webhooks/Delivery")<
  Delivery,
  { readonly running: boolean }
>() {}

/**
 * The transport ports: the HTTP sender and the sealed secrets under the configured or generated key.
 *
 * @since 0.2.0
 * @category layers
 */
export const ports = (
  options: ServiceConfig.WebhookOptions
): Layer.Layer<WebhookSender.WebhookSender | WebhookSecrets.WebhookSecrets, ConfigError.ConfigError> =>
  Layer.merge(
    HttpWebhookSender.layer(options.sender),
    Layer.unwrapEffect(Effect.map(SealedSecrets.loadKey(options.key), SealedSecrets.layer))
  )

/**
 * The delivery loop, forked for the layer's lifetime, when `options.delivery`; the `Delivery` it says.
 *
 * @since 0.2.0
 * @category layers
 */
export const delivery = (
  options: ServiceConfig.WebhookOptions
): Layer.Layer<
  Delivery,
  never,
  | WebhookStore.WebhookStore
  | WebhookSender.WebhookSender
  | WebhookSecrets.WebhookSecrets
  | SubmissionSignals.SubmissionSignals
> =>
  Layer.scoped(
    Delivery,
    options.delivery
      ? Effect.as(
          Effect.forkScoped(
            DeliverWebhooks.run({
              ...DeliverWebhooks.defaults,
              timeoutMillis: options.sender.timeoutMillis,
              retryScheduleMillis: options.retryScheduleMillis,
              disableAfterMillis: options.disableAfterMillis
            })
          ),
          { running: true }
        )
      : Effect.succeed({ running: false })
  )
