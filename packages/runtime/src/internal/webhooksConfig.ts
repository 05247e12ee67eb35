/**
 * The webhooks section of the configuration: `WEBHOOK_*`, with what the sender and the secrets' key of
 * `@filedata/webhooks-node` read themselves.
 *
 * @internal
 */
import { DeliverWebhooks } from "@filedata/core"
import { HttpWebhookSender, SealedSecrets } from "@filedata/webhooks-node"
import * as Config from "effect/Config"
import * as Either from "effect/Either"
import { flag, quoted, variable, wholeNumber } from "./configVariables.js"

/** @internal */
export interface WebhookOptions {
  /** `WEBHOOK_DELIVERY` (default true): false for an instance that should only serve reads. */
  readonly delivery: boolean
  readonly retryScheduleMillis: ReadonlyArray<number>
  readonly disableAfterMillis: number
  readonly sender: HttpWebhookSender.Options
  readonly key: SealedSecrets.KeySource
}

const retrySchedule = variable("WEBHOOK_RETRY_SCHEDULE_MS", (text) => {
  const delays = text.split(",").map((part) => part.trim())
  return delays.length <= 100 &&
    delays.every((delay) => /^\d+$/.test(delay) && Number(delay) >= 1 && Number(delay) <= 2_592_000_000)
    ? Either.right(delays.map(Number))
    : Either.left(
        `Expected comma-separated whole numbers of milliseconds from 1 to 2592000000 but received ${quoted(text)}`
      )
}).pipe(Config.withDefault<ReadonlyArray<number>>(DeliverWebhooks.defaults.retryScheduleMillis))

/** @internal */
export const webhooks: Config.Config<WebhookOptions> = Config.all({
  delivery: flag("WEBHOOK_DELIVERY").pipe(Config.withDefault(true)),
  retryScheduleMillis: retrySchedule,
  disableAfterMillis: wholeNumber(
    "WEBHOOK_DISABLE_AFTER_MS",
    DeliverWebhooks.defaults.disableAfterMillis,
    1,
    Number.MAX_SAFE_INTEGER
  ),
  sender: HttpWebhookSender.config,
  key: SealedSecrets.keySource
})
