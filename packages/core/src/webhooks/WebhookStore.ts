/**
 * The port that keeps webhooks: their registrations (with sealed secrets), the outbox of events an append
 * writes in its own transaction (`OperatorStore.appendSubmissions`), the claims that lease due events to one
 * deliverer at a time, and the deliveries log.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { ApiKey, FileId, UserId } from "../shared/FileData.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import type { AttemptRecord, Delivery, DisabledReason, Webhook, WebhookLimitReached } from "./Webhook.js"

/**
 * A webhook to register; storage gives it its id and creation time.
 *
 * @since 0.2.0
 * @category models
 */
export interface NewWebhook {
  readonly fileId: FileId
  readonly url: string
  /** Seals the secret for the id storage gives the webhook (`WebhookSecrets.seal`): never kept in the clear. */
  readonly sealSecret: (webhookId: string) => Effect.Effect<string>
}

/**
 * The secrets that sign an event: the current one, and the one a rotation replaced until its overlap ends.
 *
 * @since 0.2.0
 * @category models
 */
export interface SealedSecrets {
  readonly current: string
  readonly previous: Option.Option<{ readonly sealed: string; readonly until: number }>
}

/**
 * An event leased to one deliverer: the lease lasts until `leaseUntil`, and only the holder of `leaseToken`
 * may record its attempt. A deliverer that dies leaves the lease to run out; the event is then claimed again.
 *
 * @since 0.2.0
 * @category models
 */
export interface Claim {
  readonly eventId: string
  readonly webhookId: string
  readonly url: string
  readonly body: string
  readonly secrets: SealedSecrets
  /** This attempt's number for the event, from 1. */
  readonly attempt: number
  /** How many delays of the retry schedule the event has used since it was created or redelivered. */
  readonly step: number
  /** Epoch milliseconds of the webhook's first failed attempt since its last success, if failing. */
  readonly failingSince: Option.Option<number>
  readonly leaseToken: string
}

/**
 * What one attempt came to, as the deliverer decided it, and what that does to the event and the webhook.
 *
 * @since 0.2.0
 * @category models
 */
export interface AttemptResult extends AttemptRecord<number> {
  /** The delays of the retry schedule the event has used, the one to `nextAttemptAt` included (`Claim.step`). */
  readonly step: number
  /** Disables the webhook with this reason; its pending events become `failed`. */
  readonly disable: Option.Option<DisabledReason>
}

/**
 * An attempt made on a claim, and what it came to: what `WebhookStore.record` keeps.
 *
 * @since 0.2.0
 * @category models
 */
export interface Attempted {
  readonly claim: Claim
  readonly result: AttemptResult
}

/**
 * The events waiting to be delivered, for the metrics.
 *
 * @since 0.2.0
 * @category models
 */
export interface Backlog {
  readonly waiting: number
  /** Epoch milliseconds of the oldest waiting event's creation. */
  readonly oldestCreatedAt: Option.Option<number>
}

/**
 * @since 0.2.0
 * @category models
 */
export interface WebhookStore {
  /** The user of the active key with this text; none for an unknown or revoked key. */
  readonly ownerOfKey: (apiKey: ApiKey) => Effect.Effect<Option.Option<UserId>, StorageUnavailable>
  /** Registers an enabled webhook of a file that exists, refusing one past `Webhook.maxPerFile`. */
  readonly create: (webhook: NewWebhook) => Effect.Effect<Webhook, WebhookLimitReached | StorageUnavailable>
  /** The webhooks of the owner's files (of one file when given), oldest first. */
  readonly list: (filter: {
    readonly ownerId: UserId
    readonly fileId: Option.Option<FileId>
  }) => Effect.Effect<ReadonlyArray<Webhook>, StorageUnavailable>
  /** Every webhook, oldest first: for operators. */
  readonly listAll: (fileId: Option.Option<FileId>) => Effect.Effect<ReadonlyArray<Webhook>, StorageUnavailable>
  readonly find: (id: string) => Effect.Effect<Option.Option<Webhook>, StorageUnavailable>
  /** Removes the webhook with its events and log; false when none has this id. */
  readonly remove: (id: string) => Effect.Effect<boolean, StorageUnavailable>
  /** Enables it again: events are created for it from now on, none of the time it was disabled. */
  readonly enable: (id: string) => Effect.Effect<Option.Option<Webhook>, StorageUnavailable>
  /** Disables it; its events waiting become `failed`, and stay redeliverable. */
  readonly disable: (id: string, reason: DisabledReason) => Effect.Effect<Option.Option<Webhook>, StorageUnavailable>
  /** Replaces the secret; the one replaced still signs until `previousUntil`. False when none has this id. */
  readonly rotateSecret: (
    id: string,
    sealedSecret: string,
    previousUntil: number
  ) => Effect.Effect<boolean, StorageUnavailable>
  /** The last `limit` attempts, newest first. */
  readonly deliveries: (id: string, limit: number) => Effect.Effect<ReadonlyArray<Delivery>, StorageUnavailable>
  /** Makes the event due at once, its schedule started over; false when the webhook has no such event. */
  readonly redeliver: (id: string, eventId: string) => Effect.Effect<boolean, StorageUnavailable>
  /**
   * Leases at most `limit` due events, the oldest waiting one of each enabled webhook whose earlier events are
   * done, none of a webhook whose event is leased: so one attempt per webhook is in flight, in event order.
   * Short and alone in its transaction; several processes may claim at once and never get the same event.
   */
  readonly claim: (options: {
    readonly limit: number
    readonly leaseMillis: number
  }) => Effect.Effect<ReadonlyArray<Claim>, StorageUnavailable>
  /**
   * Logs the attempts and moves their events on, in one transaction (so a busy store is asked once for a batch
   * of attempts, not once each); an attempt whose claim no longer holds its lease changes nothing.
   */
  readonly record: (attempts: ReadonlyArray<Attempted>) => Effect.Effect<void, StorageUnavailable>
  readonly backlog: Effect.Effect<Backlog, StorageUnavailable>
}

/**
 * @since 0.2.0
 * @category tags
 */
export const WebhookStore: Context.Tag<WebhookStore, WebhookStore> =
  Context.GenericTag<WebhookStore>("@filedata/core/WebhookStore")
