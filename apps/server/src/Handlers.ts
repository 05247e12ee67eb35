/**
 * The API's handlers: they hand requests to the core and turn its answers into replies, nothing more.
 *
 * @since 0.1.0
 */

import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { FileDataApi } from "@filedata/client"
import {
  CreateWebhook,
  FileRepository,
  type FileRequest,
  ListWebhooks,
  ManageWebhook,
  RateLimiter,
  SubmissionSignals,
  WaitingRequests,
  Webhook,
  type WebhookRequest,
  WebhookSecrets,
  WebhookSender,
  WebhookStore
} from "@filedata/core"
import { Webhooks } from "@filedata/runtime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ClientAddress from "./ClientAddress.js"
import * as Operations from "./fast/Operations.js"
import * as Reply from "./fast/Reply.js"
import * as Instrumentation from "./Instrumentation.js"
import * as Middleware from "./Middleware.js"
import * as Problem from "./Problem.js"
import * as RateLimitHeaders from "./RateLimitHeaders.js"
import * as RequestBody from "./RequestBody.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Options = Operations.Options

/**
 * The operations on a file (`Operations`) as HttpApi handlers. The Node server answers their paths on its hot
 * route (`FileDataRoute`) before the router; these handlers serve the same API wherever it is mounted on a
 * platform server alone, with the same body rules, core calls and one limiter for all of them, and write
 * their replies on the Node response through `Reply` as the hot route does, so both send the same header
 * fields and bytes.
 *
 * @since 0.1.0
 * @category layers
 */
export const files = (
  options: Options
): Layer.Layer<
  HttpApiGroup.ApiGroup<"filedata", "files">,
  never,
  FileRepository.FileRepository | RateLimiter.RateLimiter | SubmissionSignals.SubmissionSignals
> =>
  HttpApiBuilder.group(FileDataApi.FileDataApi, "files", (handlers) =>
    Effect.map(
      Effect.all({
        files: FileRepository.FileRepository,
        limiter: RateLimiter.RateLimiter,
        signals: SubmissionSignals.SubmissionSignals,
        // The server's registry, when the API runs in it; mounted alone, waits are unbounded.
        waiting: Effect.map(Effect.serviceOption(WaitingRequests.WaitingRequests), Option.getOrUndefined)
      }),
      (ports) => {
        const start = Operations.starter(options, ports)
        const serve =
          (operation: Operations.Operation) =>
          ({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) =>
            Effect.flatMap(Middleware.CurrentRequestId, (requestId) => {
              const response = NodeHttpServerRequest.toServerResponse(request)
              const { answer } = start(
                operation,
                { headers: request.headers, remoteAddress: Option.getOrUndefined(request.remoteAddress), requestId },
                response
              )
              // What the reply said of the request goes on the line the middleware writes for it.
              return Effect.flatMap(
                answer(RequestBody.readJson(NodeHttpServerRequest.toIncomingMessage(request))),
                (outcome) => Effect.map(Middleware.noteOutcome(outcome), () => Reply.written(response))
              )
            })
        return handlers
          .handleRaw("getFileData", serve(Operations.getFileData))
          .handleRaw("getSubmissions", serve(Operations.getSubmissions))
          .handleRaw("getChanges", serve(Operations.getChanges))
          .handleRaw("exportSubmissions", serve(Operations.exportSubmissions))
      }
    )
  )

/**
 * The health check: its status is the database's alone, since requests are answered while the limiter
 * counts in memory, or refused by its own 503; the reply also says how the limiter counts.
 *
 * @since 0.1.0
 * @category layers
 */
export const system: Layer.Layer<
  HttpApiGroup.ApiGroup<"filedata", "system">,
  never,
  FileRepository.FileRepository | RateLimiter.RateLimiter
> = HttpApiBuilder.group(FileDataApi.FileDataApi, "system", (handlers) =>
  Effect.map(
    Effect.all({
      files: FileRepository.FileRepository,
      limiter: RateLimiter.RateLimiter,
      delivery: Effect.serviceOption(Webhooks.Delivery)
    }),
    (ports) => {
      const counting = ports.limiter.counting ?? Effect.succeed(undefined)
      // Whether this instance delivers webhook events: a server built without delivery (an embedding) says false.
      const webhookDelivery = Option.exists(ports.delivery, (delivery) => delivery.running)
      return handlers.handleRaw("health", () =>
        ports.files.ping.pipe(
          Effect.zipRight(counting),
          Effect.matchEffect({
            onFailure: (failure) => {
              const problem = Problem.fromFailure(failure)
              return Effect.as(Instrumentation.problem(problem.code), Problem.toResponse(problem))
            },
            onSuccess: (rateLimiter) =>
              Effect.succeed(
                HttpServerResponse.unsafeJson(
                  rateLimiter === undefined
                    ? { status: "ok", webhookDelivery }
                    : { status: "ok", rateLimiter, webhookDelivery }
                )
              )
          })
        )
      )
    }
  )
)

const noStore = { "cache-control": "no-store" }

const deliveryJson = (delivery: Webhook.Delivery) => ({
  eventId: delivery.eventId,
  attempt: delivery.attempt,
  at: delivery.at,
  status: Option.getOrNull(delivery.status),
  outcome: delivery.outcome,
  ...Option.match(delivery.error, { onNone: () => ({}), onSome: (error) => ({ error }) }),
  durationMs: delivery.durationMillis,
  ...Option.match(delivery.nextAttemptAt, { onNone: () => ({}), onSome: (at) => ({ nextAttemptAt: at }) })
})

// The rate-limit fields of a reply, as the file operations send them (`Reply.headers`).
const rateLimitFields = (meter: RateLimitHeaders.Meter): Record<string, string> => {
  const standing = meter.standing()
  return standing === undefined
    ? { "ratelimit-policy": meter.policy }
    : { "ratelimit-policy": meter.policy, ratelimit: standing }
}

/**
 * The webhook operations: each reads its body as the file operations do, runs its use case on a metered
 * limiter, and answers with JSON (`Cache-Control: no-store`) or a problem of the one table, each reply with
 * the rate-limit fields. A server built without the webhook ports (an embedding that provides only the file
 * ports) answers them 503.
 *
 * @since 0.2.0
 * @category layers
 */
export const webhooks = (
  options: Options
): Layer.Layer<
  HttpApiGroup.ApiGroup<"filedata", "webhooks">,
  never,
  FileRepository.FileRepository | RateLimiter.RateLimiter
> =>
  HttpApiBuilder.group(FileDataApi.FileDataApi, "webhooks", (handlers) =>
    Effect.map(
      Effect.all({
        files: FileRepository.FileRepository,
        limiter: RateLimiter.RateLimiter,
        webhooks: Effect.serviceOption(WebhookStore.WebhookStore),
        sender: Effect.serviceOption(WebhookSender.WebhookSender),
        secrets: Effect.serviceOption(WebhookSecrets.WebhookSecrets)
      }),
      (found) => {
        const ports = Option.all({ webhooks: found.webhooks, sender: found.sender, secrets: found.secrets }).pipe(
          Option.map((held) => ({ ...held, files: found.files, limiter: found.limiter }))
        )
        const meters = RateLimitHeaders.meters(found.limiter)
        const serve =
          <A, E extends WebhookRequest.ManageError | Webhook.WebhookEventNotFound>(
            run: (ports: CreateWebhook.Ports, input: FileRequest.Input) => Effect.Effect<A, E>,
            reply: (a: A) => HttpServerResponse.HttpServerResponse
          ) =>
          ({ request }: { readonly request: HttpServerRequest.HttpServerRequest }) => {
            const meter = meters()
            const metered = (response: HttpServerResponse.HttpServerResponse) =>
              HttpServerResponse.setHeaders(response, rateLimitFields(meter))
            const problem = (failure: Problem.Problem) =>
              Effect.as(Instrumentation.problem(failure.code), metered(Problem.toResponse(failure)))
            if (Option.isNone(ports)) {
              return problem(Problem.make("storage_unavailable", "Webhooks are not available on this server"))
            }
            const input: FileRequest.Input = {
              clientAddress: ClientAddress.of(
                request.headers,
                Option.getOrUndefined(request.remoteAddress),
                options.trustProxy
              ),
              body: RequestBody.readJson(NodeHttpServerRequest.toIncomingMessage(request)),
              authorization: request.headers.authorization !== undefined
            }
            return Effect.matchEffect(run({ ...ports.value, limiter: meter.limiter }, input), {
              onFailure: (failure) => problem(Problem.fromFailure(failure)),
              onSuccess: (a) => Effect.succeed(metered(reply(a)))
            })
          }
        const json = (body: unknown, status = 200) => HttpServerResponse.unsafeJson(body, { status, headers: noStore })
        return handlers
          .handleRaw(
            "createWebhook",
            serve(CreateWebhook.runWith, ({ webhook, secret }) =>
              json({ ...Webhook.toJson(webhook), secret: Redacted.value(secret) }, 201)
            )
          )
          .handleRaw(
            "listWebhooks",
            serve(ListWebhooks.runWith, (list) => json({ webhooks: list.map(Webhook.toJson) }))
          )
          .handleRaw(
            "deleteWebhook",
            serve(ManageWebhook.remove, () => HttpServerResponse.empty({ status: 204, headers: noStore }))
          )
          .handleRaw(
            "enableWebhook",
            serve(ManageWebhook.enable, (webhook) => json(Webhook.toJson(webhook)))
          )
          .handleRaw(
            "rotateWebhookSecret",
            serve(ManageWebhook.rotateSecret, ({ id, secret }) => json({ id, secret: Redacted.value(secret) }))
          )
          .handleRaw(
            "webhookDeliveries",
            serve(ManageWebhook.deliveries, (deliveries) => json({ deliveries: deliveries.map(deliveryJson) }))
          )
          .handleRaw(
            "redeliverWebhookEvent",
            // Framed by its length: Node would frame a body-less reply it did not size as an empty chunked one.
            serve(ManageWebhook.redeliver, () =>
              HttpServerResponse.empty({ status: 202, headers: { ...noStore, "content-length": "0" } })
            )
          )
      }
    )
  )
