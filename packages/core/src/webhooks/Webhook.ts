/**
 * Webhooks as the core knows them: a file's registered endpoint, the events an append creates for it, the
 * attempts that deliver them, and the typed failures of managing them. The wire form of an event is the
 * contract's `submissions.created` body (Standard Webhooks envelope), built here so every adapter writes the
 * same bytes.
 *
 * @since 0.2.0
 */
import * as Arr from "effect/Array"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ChangeCursor } from "../changes/ChangeCursor.js"
import type { FileId, Timestamp, UserId } from "../shared/FileData.js"
import * as Failure from "../shared/internal/failure.js"
import * as SubmissionEntry from "../shared/SubmissionEntry.js"
import type { SubmissionId } from "../shared/SubmissionId.js"
import type { SubmissionCursor } from "../sync/SubmissionCursor.js"

/**
 * Webhooks one file may have at most; a `create` beyond is refused.
 *
 * @since 0.2.0
 * @category constants
 */
export const maxPerFile = 10

/**
 * Submissions one event carries at most; an append of more to one file makes several events.
 *
 * @since 0.2.0
 * @category constants
 */
export const submissionsPerEvent = 100

/**
 * Ids one `submissions.erased` event carries at most; an erasure of more makes several events.
 *
 * @since 0.3.0
 * @category constants
 */
export const idsPerEvent = 1000

/**
 * How long the secret a rotation replaced still signs deliveries.
 *
 * @since 0.2.0
 * @category constants
 */
export const rotationOverlapMillis = 24 * 60 * 60 * 1000

/**
 * The event type of an append's event.
 *
 * @since 0.2.0
 * @category constants
 */
export const eventType = "submissions.created"

/**
 * The event type of an erasure's event.
 *
 * @since 0.3.0
 * @category constants
 */
export const erasedEventType = "submissions.erased"

/**
 * Why a webhook was disabled: the receiver answered 410 (`gone`), every attempt failed for the disable period
 * (`failing`), or an operator disabled it (`operator`).
 *
 * @since 0.2.0
 * @category models
 */
export const DisabledReason = Schema.Literal("gone", "failing", "operator")

/**
 * @since 0.2.0
 * @category models
 */
export type DisabledReason = typeof DisabledReason.Type

/**
 * A registered webhook, without its secret.
 *
 * @since 0.2.0
 * @category models
 */
export interface Webhook {
  readonly id: string
  readonly fileId: FileId
  /** The user who owns the file, so who may manage the webhook. */
  readonly ownerId: UserId
  readonly url: string
  readonly enabled: boolean
  readonly createdAt: Timestamp
  readonly disabledReason: Option.Option<DisabledReason>
}

/**
 * How an attempt ended for the event: delivered, to be tried again, or given up (still redeliverable).
 *
 * @since 0.2.0
 * @category models
 */
export const DeliveryOutcome = Schema.Literal("delivered", "retrying", "failed")

/**
 * @since 0.2.0
 * @category models
 */
export type DeliveryOutcome = typeof DeliveryOutcome.Type

/**
 * What one attempt came to, its instants as `Instant`: epoch milliseconds as the deliverer decides it
 * (`WebhookStore.AttemptResult`), a {@link Timestamp} as the deliveries log shows it ({@link Delivery}).
 *
 * @since 0.2.0
 * @category models
 */
export interface AttemptRecord<Instant> {
  readonly at: Instant
  /** The receiver's HTTP status, none when it did not answer. */
  readonly status: Option.Option<number>
  readonly outcome: DeliveryOutcome
  /** Why it failed, safe to show the owner: a failure class and a short description, never a body. */
  readonly error: Option.Option<string>
  readonly durationMillis: number
  /** When `retrying`: when the event is due again. */
  readonly nextAttemptAt: Option.Option<Instant>
}

/**
 * One attempt of the deliveries log.
 *
 * @since 0.2.0
 * @category models
 */
export interface Delivery extends AttemptRecord<Timestamp> {
  readonly eventId: string
  /** 1 for an event's first attempt, counting on through retries and redeliveries. */
  readonly attempt: number
}

/**
 * No webhook has this id, or it belongs to another user: both answer alike, so ids of others stay unknown.
 *
 * @since 0.2.0
 * @category errors
 */
export class WebhookNotFound extends Failure.withMessage<WebhookNotFound>()(
  "WebhookNotFound",
  {},
  "No webhook of yours has this id"
) {}

/**
 * The webhook has no event with this id.
 *
 * @since 0.2.0
 * @category errors
 */
export class WebhookEventNotFound extends Failure.withMessage<WebhookEventNotFound>()(
  "WebhookEventNotFound",
  {},
  "This webhook has no event with this id"
) {}

/**
 * The file has {@link maxPerFile} webhooks already.
 *
 * @since 0.2.0
 * @category errors
 */
export class WebhookLimitReached extends Failure.withMessage<WebhookLimitReached>()(
  "WebhookLimitReached",
  { limit: Schema.Number },
  (failure) => `A file has at most ${failure.limit} webhooks`
) {}

/**
 * What an event of an append says: the file, its counters after the append, the submissions it carries (at
 * most {@link submissionsPerEvent}, in reply order, each with its id at the same index of `ids`), the incremental
 * read's cursor after the latest of them, and the change feed's cursor after the event's last change.
 *
 * @since 0.2.0
 * @category models
 */
export interface EventData {
  readonly timestamp: Timestamp
  readonly fileId: FileId
  readonly submissionCounter: number
  readonly visitCounter: number
  readonly entries: ReadonlyArray<SubmissionEntry.SubmissionEntry>
  /** @since 0.3.0 */
  readonly ids: ReadonlyArray<SubmissionId>
  readonly next: SubmissionCursor
  /** @since 0.3.0 */
  readonly changesNext: ChangeCursor
}

/**
 * The JSON body of an event: `{"type","timestamp","data":{"fileId","SubmissionCounter","VisitCounter",
 * "submissions","next","changesNext"}}`. Each submission is its stored entry with its id first
 * (`SubmissionEntry.withId`), as the incremental read shows it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const eventBody = (data: EventData): string =>
  `{"type":${JSON.stringify(eventType)},"timestamp":${JSON.stringify(data.timestamp)},"data":{"fileId":${JSON.stringify(
    data.fileId
  )},"SubmissionCounter":${data.submissionCounter},"VisitCounter":${data.visitCounter},"submissions":[${Arr.zipWith(
    data.entries,
    data.ids,
    (entry, id) => SubmissionEntry.withId(id, entry)
  ).join(",")}],"next":${JSON.stringify(data.next)},"changesNext":${JSON.stringify(data.changesNext)}}}`

/**
 * What an event of an erasure says: the file, its counters after the erasure, the ids it erased (at most
 * {@link idsPerEvent}, in the erasure's order) and the change feed's cursor after the last of their changes.
 *
 * @since 0.3.0
 * @category models
 */
export interface ErasedEventData {
  readonly timestamp: Timestamp
  readonly fileId: FileId
  readonly submissionCounter: number
  readonly visitCounter: number
  readonly ids: ReadonlyArray<SubmissionId>
  readonly changesNext: ChangeCursor
}

/**
 * The JSON body of an erasure's event: `{"type":"submissions.erased","timestamp","data":{"fileId",
 * "SubmissionCounter","VisitCounter","ids","changesNext"}}`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const erasedEventBody = (data: ErasedEventData): string =>
  `{"type":${JSON.stringify(erasedEventType)},"timestamp":${JSON.stringify(data.timestamp)},"data":{"fileId":${JSON.stringify(
    data.fileId
  )},"SubmissionCounter":${data.submissionCounter},"VisitCounter":${data.visitCounter},"ids":${JSON.stringify(
    data.ids
  )},"changesNext":${JSON.stringify(data.changesNext)}}}`

/**
 * A webhook as the management replies show it (`disabledReason` only when it has one).
 *
 * @since 0.2.0
 * @category encoding
 */
export const toJson = (webhook: Webhook): Record<string, unknown> => ({
  id: webhook.id,
  fileId: webhook.fileId,
  url: webhook.url,
  enabled: webhook.enabled,
  createdAt: webhook.createdAt,
  ...Option.match(webhook.disabledReason, { onNone: () => ({}), onSome: (reason) => ({ disabledReason: reason }) })
})
