/**
 * Registers a webhook on a file of the caller's: the URL is checked by the sender's own rules, a fresh secret
 * is made, sealed for storage, and shown in this reply only.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Issue, pointer } from "../shared/FileDataError.js"
import * as RequestDecoding from "../shared/RequestDecoding.js"
import * as RequestSchema from "../shared/RequestSchema.js"
import { maxPerFile, type Webhook } from "./Webhook.js"
import * as WebhookRequest from "./WebhookRequest.js"
import type * as WebhookSecrets from "./WebhookSecrets.js"
import type * as WebhookSender from "./WebhookSender.js"

/**
 * The longest URL a webhook may have.
 *
 * @since 0.2.0
 * @category constants
 */
export const maxUrlLength = 2048

/**
 * The request body; any other member is refused.
 *
 * @since 0.2.0
 * @category schemas
 */
export const CreateWebhookRequest = Schema.Struct({
  apiKey: RequestSchema.apiKeyField,
  fileId: RequestSchema.fileIdField("The file whose new submissions the webhook receives"),
  url: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(maxUrlLength)).annotations({
    title: "URL",
    description: `The receiver: https:// (http:// only where private networks are allowed), no user or password, at most ${maxUrlLength} characters`
  })
}).annotations({ identifier: "CreateWebhookRequest" })

/**
 * The webhook created, and its secret, shown this once.
 *
 * @since 0.2.0
 * @category models
 */
export interface Created {
  readonly webhook: Webhook
  readonly secret: Redacted.Redacted<string>
}

/**
 * The ports the operation runs on.
 *
 * @since 0.2.0
 * @category models
 */
export interface Ports extends WebhookRequest.Ports {
  readonly sender: WebhookSender.WebhookSenderShape
  readonly secrets: WebhookSecrets.WebhookSecretsShape
}

const parse = WebhookRequest.parser(CreateWebhookRequest, {
  url: `must be an https URL of at most ${maxUrlLength} characters`
})

const refused = (detail: string) => RequestDecoding.invalidPayload([new Issue({ pointer: pointer("url"), detail })])

/**
 * Runs the operation for one request.
 *
 * @since 0.2.0
 * @category use cases
 */
export const runWith: WebhookRequest.Operation<Created, WebhookRequest.ManageError, Ports> = (ports, input) =>
  Effect.gen(function* () {
    const request = yield* WebhookRequest.admit(ports, input, parse)
    yield* WebhookRequest.ownFile(ports, request.apiKey, request.fileId)
    yield* Effect.catchTag(ports.sender.check(request.url), "WebhookUrlRefused", (refusal) =>
      Effect.fail(refused(refusal.reason))
    )
    const secret = yield* ports.secrets.generate
    const webhook = yield* Effect.catchTag(
      ports.webhooks.create({
        fileId: request.fileId,
        url: request.url,
        sealSecret: (id) => ports.secrets.seal(secret, id)
      }),
      "WebhookLimitReached",
      () =>
        Effect.fail(
          RequestDecoding.invalidPayload([
            new Issue({ pointer: pointer("fileId"), detail: `has ${maxPerFile} webhooks already` })
          ])
        )
    )
    return { webhook, secret }
  })

/**
 * The request as a client sends it, marked with the operation's reading (`RequestSchema.readBy`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const RequestJson = RequestSchema.readBy(Schema.encodedBoundSchema(CreateWebhookRequest), parse)
