/**
 * `webhook list|disable`: what an operator needs to see of webhooks and to stop one.
 *
 * @since 0.2.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type { FileDataError } from "@filedata/core"
import { type Webhook, WebhookStore } from "@filedata/core"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { fileOption, table } from "./shared.js"

/**
 * What `webhook` commands fail with: an unknown id is a plain `Error`, printed as its message.
 *
 * @since 0.2.0
 * @category errors
 */
export type Failure = FileDataError.StorageUnavailable | Error

// The URL without its query, which may hold a receiver's token: an operator needs where it goes, not that.
const shownUrl = (url: string): string => {
  const parsed = URL.parse(url)
  return parsed === null ? "-" : `${parsed.origin}${parsed.pathname}${parsed.search === "" ? "" : "?…"}`
}

const webhookRows = (webhooks: ReadonlyArray<Webhook.Webhook>): ReadonlyArray<string> =>
  table([
    ["ID", "FILE", "STATE", "CREATED", "URL"],
    ...webhooks.map((webhook) => [
      webhook.id,
      webhook.fileId,
      webhook.enabled ? "enabled" : `disabled (${Option.getOrElse(webhook.disabledReason, () => "-")})`,
      webhook.createdAt,
      shownUrl(webhook.url)
    ])
  ])

const listWebhooksCommand = Command.make(
  "list",
  { file: fileOption("only this file's webhooks").pipe(Options.optional) },
  ({ file }) =>
    Effect.gen(function* () {
      const webhooks = yield* (yield* WebhookStore.WebhookStore).listAll(file)
      if (webhooks.length === 0) return yield* Console.log("no webhooks")
      yield* Effect.forEach(webhookRows(webhooks), (row) => Console.log(row))
    })
).pipe(Command.withDescription("list webhooks: ids, files, state, creation and URL (without its query)"))

const disableWebhookCommand = Command.make("disable", { id: Args.text({ name: "ID" }) }, ({ id }) =>
  Effect.gen(function* () {
    const disabled = yield* (yield* WebhookStore.WebhookStore).disable(id, "operator")
    if (Option.isNone(disabled)) return yield* Effect.fail(new Error(`no webhook has the id ${JSON.stringify(id)}`))
    yield* Console.log(`disabled webhook ${disabled.value.id} of file ${disabled.value.fileId}`)
  })
).pipe(Command.withDescription("disable a webhook at once (disabledReason operator); its owner can enable it again"))

/**
 * `webhook list [--file ID]` and `webhook disable ID`.
 *
 * @since 0.2.0
 * @category commands
 */
export const webhookCommand = Command.make("webhook").pipe(
  Command.withDescription("see and disable webhooks"),
  Command.withSubcommands([listWebhooksCommand, disableWebhookCommand])
)
