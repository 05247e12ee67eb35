/**
 * What the webhook management operations share, so each rule exists once, in the order of `FileRequest`:
 * the client address is counted, the body is read strictly (unknown members refused, each problem by JSON
 * Pointer), the API key is counted, then the key must be active (else `AccessDenied`, before anything is
 * looked up), a file must exist (`FileNotFound`) and be the key's user's (`AccessDenied`), and a webhook
 * must exist and be the user's (`WebhookNotFound` either way, so others' ids stay unknown).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type { ApiKey, FileId, UserId } from "../shared/FileData.js"
import {
  AccessDenied,
  FileNotFound,
  type GetFileDataError,
  type InvalidRequest,
  type StorageUnavailable
} from "../shared/FileDataError.js"
import type * as FileRepository from "../shared/FileRepository.js"
import * as FileRequest from "../shared/FileRequest.js"
import * as RequestDecoding from "../shared/RequestDecoding.js"
import * as RequestLog from "../shared/RequestLog.js"
import { type Webhook, WebhookNotFound } from "./Webhook.js"
import type * as WebhookStore from "./WebhookStore.js"

/**
 * The ports a management operation runs on.
 *
 * @since 0.2.0
 * @category models
 */
export interface Ports extends FileRequest.Ports {
  readonly webhooks: WebhookStore.WebhookStore
}

/**
 * Every failure a management operation can end with, besides its own.
 *
 * @since 0.2.0
 * @category errors
 */
export type ManageError = GetFileDataError | WebhookNotFound

/**
 * A management operation: one request run on its ports, answered with `A` or failing with `E`.
 *
 * @since 0.2.0
 * @category models
 */
export type Operation<A, E = ManageError, P extends Ports = Ports> = (
  ports: P,
  input: FileRequest.Input
) => Effect.Effect<A, E>

/**
 * The strict decoder of a request schema as an effect failing with the 422 that names each member.
 *
 * @since 0.2.0
 * @category decoding
 */
export const parser = <A, I>(
  schema: Schema.Schema<A, I>,
  details: Readonly<Record<string, string>> = {}
): ((body: unknown) => Effect.Effect<A, InvalidRequest>) => {
  const decode = RequestDecoding.decoder(schema, details)
  return (body) => {
    const result = decode(body)
    return result._tag === "Right"
      ? Effect.succeed(result.right)
      : Effect.fail(RequestDecoding.invalidPayload(result.left.issues, result.left.unlisted))
  }
}

/**
 * Counts the address, reads the body with `parse`, counts the key: the steps before any lookup
 * (`FileRequest.admit`).
 *
 * @since 0.2.0
 * @category use cases
 */
export const admit = <R extends { readonly apiKey: ApiKey }>(
  { limiter }: Ports,
  input: FileRequest.Input,
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>
): Effect.Effect<R, GetFileDataError> => Effect.suspend(() => FileRequest.admit(limiter, input, parse, logsNothing))

const logsNothing = () => Effect.void

/**
 * The user of an active key, or `AccessDenied`.
 *
 * @since 0.2.0
 * @category use cases
 */
export const keyOwner = (
  { webhooks }: Ports,
  apiKey: ApiKey
): Effect.Effect<UserId, AccessDenied | StorageUnavailable> =>
  Effect.flatMap(webhooks.ownerOfKey(apiKey), (owner) =>
    Option.match(owner, {
      onNone: () => Effect.fail(new AccessDenied()),
      onSome: (userId) => Effect.as(RequestLog.annotate("userId", userId), userId)
    })
  )

/**
 * The file, when the key is active and its user owns the file: the rules of the read operations.
 *
 * @since 0.2.0
 * @category use cases
 */
export const ownFile = (
  { files }: Ports,
  apiKey: ApiKey,
  fileId: FileId
): Effect.Effect<FileRepository.FoundFile, AccessDenied | FileNotFound | StorageUnavailable> =>
  Effect.gen(function* () {
    yield* RequestLog.annotate("fileId", fileId)
    const { file, owner } = yield* files.findAccess(apiKey, fileId)
    if (Option.isNone(owner)) return yield* new AccessDenied()
    yield* RequestLog.annotate("userId", owner.value)
    if (Option.isNone(file)) return yield* new FileNotFound()
    if (file.value.ownerId !== owner.value) return yield* new AccessDenied()
    return file.value
  })

/**
 * The webhook, when the key is active and its user owns the webhook's file.
 *
 * @since 0.2.0
 * @category use cases
 */
export const ownWebhook = (
  ports: Ports,
  apiKey: ApiKey,
  id: string
): Effect.Effect<Webhook, AccessDenied | WebhookNotFound | StorageUnavailable> =>
  Effect.gen(function* () {
    const userId = yield* keyOwner(ports, apiKey)
    const webhook = yield* ports.webhooks.find(id)
    if (Option.isNone(webhook) || webhook.value.ownerId !== userId) return yield* new WebhookNotFound()
    yield* RequestLog.annotate("fileId", webhook.value.fileId)
    return webhook.value
  })

/**
 * The operation on one webhook that `use` does, once the request, read with `parse`, is admitted and the
 * webhook it names (`id`) is the caller's.
 *
 * @since 0.2.0
 * @category use cases
 */
export const onWebhook =
  <R extends { readonly apiKey: ApiKey; readonly id: string }, P extends Ports, A, E>(
    parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
    use: (ports: P, webhook: Webhook, request: R) => Effect.Effect<A, E>
  ): Operation<A, ManageError | E, P> =>
  (ports, input) =>
    Effect.flatMap(admit(ports, input, parse), (request) =>
      Effect.flatMap(ownWebhook(ports, request.apiKey, request.id), (webhook) => use(ports, webhook, request))
    )
