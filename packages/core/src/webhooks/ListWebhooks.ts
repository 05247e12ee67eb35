/**
 * The caller's webhooks, of one file when `fileId` is given, without their secrets.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as RequestSchema from "../shared/RequestSchema.js"
import type { Webhook } from "./Webhook.js"
import * as WebhookRequest from "./WebhookRequest.js"

/**
 * The request body; any other member is refused.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ListWebhooksRequest = Schema.Struct({
  apiKey: RequestSchema.apiKeyField,
  fileId: Schema.optionalWith(RequestSchema.fileIdField("Only this file's webhooks"), { exact: true })
}).annotations({ identifier: "ListWebhooksRequest" })

const parse = WebhookRequest.parser(ListWebhooksRequest)

/**
 * Runs the operation for one request: a file's are listed under the read operations' rules for that file.
 *
 * @since 0.2.0
 * @category use cases
 */
export const runWith: WebhookRequest.Operation<ReadonlyArray<Webhook>> = (ports, input) =>
  Effect.gen(function* () {
    const request = yield* WebhookRequest.admit(ports, input, parse)
    if (request.fileId === undefined) {
      const ownerId = yield* WebhookRequest.keyOwner(ports, request.apiKey)
      return yield* ports.webhooks.list({ ownerId, fileId: Option.none() })
    }
    const file = yield* WebhookRequest.ownFile(ports, request.apiKey, request.fileId)
    return yield* ports.webhooks.list({ ownerId: file.ownerId, fileId: Option.some(file.id) })
  })

/**
 * The request as a client sends it, marked with the operation's reading (`RequestSchema.readBy`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const RequestJson = RequestSchema.readBy(Schema.encodedBoundSchema(ListWebhooksRequest), parse)
