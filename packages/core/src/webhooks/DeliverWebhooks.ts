/**
 * Delivery of webhook events: claims due events from the outbox (`WebhookStore.claim`, one per webhook at a
 * time), opens their secrets, has the `WebhookSender` make the attempt, decides what it came to (delivered,
 * retried after the schedule's next delay with jitter or a longer `Retry-After`, failed, the webhook disabled on
 * 410 or after failing for too long), and records it. No storage transaction is open during an attempt: a claim
 * is a lease that a crash lets run out, so the event is attempted again, under the same id.
 *
 * @since 0.2.0
 */

import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import type * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as SubmissionSignals from "../sync/SubmissionSignals.js"
import type { DisabledReason } from "./Webhook.js"
import * as WebhookSecrets from "./WebhookSecrets.js"
import * as WebhookSender from "./WebhookSender.js"
import * as WebhookStore from "./WebhookStore.js"

/**
 * How delivery behaves: `WEBHOOK_TIMEOUT_MS`, `WEBHOOK_RETRY_SCHEDULE_MS`, `WEBHOOK_DISABLE_AFTER_MS`, and the
 * bounds of one instance.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly timeoutMillis: number
  /** The delays before each retry, in turn; after the last, the event has failed. */
  readonly retryScheduleMillis: ReadonlyArray<number>
  readonly disableAfterMillis: number
  /** Attempts in flight at once in this instance, over every webhook. */
  readonly concurrency: number
  /**
   * How often storage is asked for due events when no commit is signalled: the bound for retries coming due and
   * for a lost signal; at most a second, so a first attempt starts within 2 s even then.
   */
  readonly pollMillis: number
}

/**
 * The defaults of the contract.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults: Options = {
  timeoutMillis: 15_000,
  retryScheduleMillis: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
  disableAfterMillis: 5 * 24 * 60 * 60 * 1000,
  concurrency: 64,
  pollMillis: 500
}

/**
 * How long past an attempt's start a lease runs: the sender gives up at the timeout, so only a crash leaves
 * one to run out, and the event is then taken again within the contract's `WEBHOOK_TIMEOUT_MS` + 10 s.
 *
 * @since 0.2.0
 * @category constants
 */
export const leaseMarginMillis = 10_000

/**
 * The largest share of a delay added as jitter.
 *
 * @since 0.2.0
 * @category constants
 */
export const jitterShare = 0.1

const outcomes = ["delivered", "retrying", "failed"] as const
const attempts = Metric.counter("filedata_webhook_attempts_total", {
  description: "Webhook delivery attempts, by outcome: delivered, retrying, failed",
  incremental: true
})
const latency = Metric.histogram(
  "filedata_webhook_attempt_duration_seconds",
  MetricBoundaries.fromIterable([0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]),
  "Time from a webhook attempt's start to the receiver's answer or the failure"
)
const waiting = Metric.gauge("filedata_webhook_events_waiting", {
  description: "Webhook events not yet delivered nor given up, over every instance"
})
const oldestAge = Metric.gauge("filedata_webhook_oldest_event_age_seconds", {
  description: "Age of the oldest webhook event waiting, 0 when none waits"
})

/**
 * How an attempt ended: the sender's outcome, or no attempt at all since the secrets could not be opened (a key
 * other than the one that sealed them), which is retried on the schedule like any failure.
 *
 * @since 0.2.0
 * @category models
 */
export type Ending = WebhookSender.Outcome | { readonly _tag: "SecretUnreadable"; readonly durationMillis: 0 }

/**
 * What an attempt came to, given how the receiver answered, the claim's place in the schedule, the time and a
 * jitter draw in [0, 1). Pure, so each rule of the contract is tested alone.
 *
 * @since 0.2.0
 * @category decisions
 */
export const decide = (
  claim: WebhookStore.Claim,
  outcome: Ending,
  now: number,
  options: Pick<Options, "retryScheduleMillis" | "disableAfterMillis">,
  jitter: number
): WebhookStore.AttemptResult => {
  const status = outcome._tag === "Answered" ? Option.some(outcome.status) : Option.none()
  const base = { at: now, status, durationMillis: outcome.durationMillis }
  if (outcome._tag === "Answered" && outcome.status >= 200 && outcome.status < 300) {
    return {
      ...base,
      outcome: "delivered",
      error: Option.none(),
      nextAttemptAt: Option.none(),
      step: claim.step,
      disable: Option.none()
    }
  }
  const error =
    outcome._tag === "Answered"
      ? `http ${outcome.status}`
      : outcome._tag === "NotAnswered"
        ? `${outcome.failure}: ${outcome.detail}`
        : "secret_unreadable: the secret cannot be opened with WEBHOOK_ENCRYPTION_KEY"
  const failed = (disable: Option.Option<DisabledReason>): WebhookStore.AttemptResult => ({
    ...base,
    outcome: "failed",
    error: Option.some(error),
    nextAttemptAt: Option.none(),
    step: claim.step,
    disable
  })
  if (outcome._tag === "Answered" && outcome.status === 410) return failed(Option.some("gone"))
  const failingSince = Option.getOrElse(claim.failingSince, () => now)
  if (now - failingSince >= options.disableAfterMillis) return failed(Option.some("failing"))
  const delay = options.retryScheduleMillis[claim.step]
  if (delay === undefined) return failed(Option.none())
  const jittered = Math.round(delay * (1 + jitterShare * jitter))
  // A receiver that asks for longer (429, 503) gets it; a shorter ask does not speed the schedule up.
  const retryAfter = outcome._tag === "Answered" ? Option.getOrElse(outcome.retryAfterMillis, () => 0) : 0
  return {
    ...base,
    outcome: "retrying",
    error: Option.some(error),
    nextAttemptAt: Option.some(now + Math.max(jittered, retryAfter)),
    step: claim.step + 1,
    disable: Option.none()
  }
}

/**
 * The ports delivery runs on.
 *
 * @since 0.2.0
 * @category models
 */
export interface Ports {
  readonly webhooks: WebhookStore.WebhookStore
  readonly sender: WebhookSender.WebhookSenderShape
  readonly secrets: WebhookSecrets.WebhookSecretsShape
}

// The secrets that sign: the current one first, the replaced one while its overlap lasts.
const openSecrets = (
  secrets: WebhookSecrets.WebhookSecretsShape,
  claim: WebhookStore.Claim
): Effect.Effect<ReadonlyArray<Redacted.Redacted<string>>, WebhookSecrets.SecretUnreadable> =>
  Effect.all([
    secrets.open(claim.secrets.current, claim.webhookId),
    ...Option.toArray(Option.map(claim.secrets.previous, (previous) => secrets.open(previous.sealed, claim.webhookId)))
  ])

/**
 * Makes one claimed attempt and decides what it came to, with its metrics and, when it failed, its log line.
 * Never fails: an unreadable secret is an attempt that failed.
 *
 * @since 0.2.0
 * @category use cases
 */
export const makeAttempt = (
  ports: Ports,
  options: Pick<Options, "timeoutMillis" | "retryScheduleMillis" | "disableAfterMillis">,
  claim: WebhookStore.Claim
): Effect.Effect<WebhookStore.Attempted> =>
  Effect.gen(function* () {
    const outcome: Ending = yield* openSecrets(ports.secrets, claim).pipe(
      Effect.flatMap((secrets) =>
        ports.sender.send({
          url: claim.url,
          eventId: claim.eventId,
          body: claim.body,
          secrets,
          timeoutMillis: options.timeoutMillis
        })
      ),
      Effect.catchTag("SecretUnreadable", () => Effect.succeed<Ending>({ _tag: "SecretUnreadable", durationMillis: 0 }))
    )
    const now = yield* Clock.currentTimeMillis
    const jitter = yield* Random.next
    const result = decide(claim, outcome, now, options, jitter)
    yield* Metric.increment(Metric.tagged(attempts, "outcome", result.outcome))
    yield* Metric.update(latency, outcome.durationMillis / 1000)
    if (result.outcome !== "delivered") {
      // Ids and the failure only: never the URL (its query may hold a token) nor a secret.
      yield* Effect.logWarning("webhook attempt failed").pipe(
        Effect.annotateLogs({
          webhookId: claim.webhookId,
          eventId: claim.eventId,
          attempt: claim.attempt,
          outcome: result.outcome,
          ...(outcome._tag === "Answered"
            ? { status: outcome.status }
            : { error: outcome._tag === "NotAnswered" ? outcome.failure : "secret_unreadable" }),
          ...Option.match(result.disable, { onNone: () => ({}), onSome: (reason) => ({ disabled: reason }) })
        })
      )
    }
    return { claim, result }
  })

/**
 * Records attempts made. Never fails: storage that is away loses only the records, and the leases running out
 * bring the events back, under the same ids.
 *
 * @since 0.2.0
 * @category use cases
 */
export const record = (
  webhooks: WebhookStore.WebhookStore,
  attempted: ReadonlyArray<WebhookStore.Attempted>
): Effect.Effect<void> =>
  webhooks.record(attempted).pipe(
    Effect.catchAll((failure) =>
      Effect.logWarning("webhook attempts not recorded").pipe(
        Effect.annotateLogs({
          webhookIds: attempted.map(({ claim }) => claim.webhookId),
          eventIds: attempted.map(({ claim }) => claim.eventId),
          error: failure._tag
        })
      )
    )
  )

/**
 * Makes one claimed attempt and records it.
 *
 * @since 0.2.0
 * @category use cases
 */
export const attempt = (
  ports: Ports,
  options: Pick<Options, "timeoutMillis" | "retryScheduleMillis" | "disableAfterMillis">,
  claim: WebhookStore.Claim
): Effect.Effect<void> =>
  Effect.flatMap(makeAttempt(ports, options, claim), (attempted) => record(ports.webhooks, [attempted]))

/**
 * Publishes the backlog's gauges: events waiting, and the age of the oldest.
 *
 * @since 0.2.0
 * @category use cases
 */
export const observeBacklog = (webhooks: WebhookStore.WebhookStore): Effect.Effect<void> =>
  Effect.gen(function* () {
    const backlog = yield* webhooks.backlog
    const now = yield* Clock.currentTimeMillis
    yield* Metric.set(waiting, backlog.waiting)
    yield* Metric.set(
      oldestAge,
      Option.match(backlog.oldestCreatedAt, { onNone: () => 0, onSome: (at) => Math.max(0, now - at) / 1000 })
    )
  }).pipe(Effect.catchAll(() => Effect.void))

/**
 * Delivers until interrupted: every `pollMillis` it claims as many due events as it has room for, up to
 * `concurrency` attempts in flight, each attempt in a fiber of its own, so a receiver that hangs holds one
 * place for at most the timeout and the others go on. Attempts that end are recorded together, as many as
 * have ended while the last record was written: a store busy with appends is asked once a batch, not once an
 * attempt. A full claim asks again at once, and so does a record, which frees places and may have made the
 * webhooks' next events due, and so does a commit of submissions that storage signals (`SubmissionSignals`'s
 * `committed`), whichever process made it, since it wrote their events: a first attempt starts about the
 * signal's delay after the commit, not the poll's (docs/performance.md#wake-ups-from-other-processes).
 *
 * @since 0.2.0
 * @category use cases
 */
export const run = (
  options: Options
): Effect.Effect<
  never,
  never,
  | WebhookStore.WebhookStore
  | WebhookSender.WebhookSender
  | WebhookSecrets.WebhookSecrets
  | SubmissionSignals.SubmissionSignals
> =>
  Effect.gen(function* () {
    const signals = yield* SubmissionSignals.SubmissionSignals
    const ports: Ports = {
      webhooks: yield* WebhookStore.WebhookStore,
      sender: yield* WebhookSender.WebhookSender,
      secrets: yield* WebhookSecrets.WebhookSecrets
    }
    const inFlight = yield* Ref.make(0)
    const finished = yield* Queue.unbounded<WebhookStore.Attempted>()
    // Records and commits since the last claim, as one signal: a burst of them wakes one claim, not one each, and a
    // commit signalled during a claim, which may have missed its events, wakes the next rather than the poll.
    const wake = yield* Queue.sliding<void>(1)
    const release = (places: number) =>
      Effect.zipRight(
        Ref.update(inFlight, (n) => n - places),
        Queue.offer(wake, undefined)
      )
    const scope = yield* Effect.scope
    const leaseMillis = options.timeoutMillis + leaseMarginMillis
    // Claims only what free places can take at once, so a claimed event never waits on its lease. Attempts run
    // in this scope: interrupted with delivery, their leases run out and another instance takes them up.
    const round: Effect.Effect<boolean> = Effect.gen(function* () {
      const room = options.concurrency - (yield* Ref.get(inFlight))
      if (room === 0) return false
      const claims = yield* ports.webhooks
        .claim({ limit: room, leaseMillis })
        .pipe(
          Effect.catchAll((failure) =>
            Effect.as(Effect.logWarning("webhook claim failed").pipe(Effect.annotateLogs({ error: failure._tag })), [])
          )
        )
      for (const claim of claims) {
        yield* Ref.update(inFlight, (n) => n + 1)
        yield* Effect.forkIn(
          Effect.matchCauseEffect(makeAttempt(ports, options, claim), {
            onSuccess: (attempted) => Queue.offer(finished, attempted),
            // A defect records nothing: the lease runs out and the event comes back; its place is freed now.
            onFailure: (cause) => Effect.zipRight(Effect.logError("webhook attempt died", cause), release(1))
          }),
          scope
        )
      }
      return claims.length === room
    })
    // Every series from 0 at the start, so `rate()` and `increase()` see the first attempt of each outcome.
    yield* Effect.forEach(outcomes, (outcome) => Metric.value(Metric.tagged(attempts, "outcome", outcome)))
    yield* Metric.value(latency)
    yield* Effect.forkIn(Effect.repeat(observeBacklog(ports.webhooks), Schedule.spaced(Duration.seconds(5))), scope)
    // An attempt's place is freed once it is recorded, so a claim never overtakes a record it depends on.
    const recordEnded = Effect.gen(function* () {
      const batch = yield* Queue.takeBetween(finished, 1, options.concurrency)
      yield* record(ports.webhooks, Chunk.toReadonlyArray(batch))
      yield* release(batch.length)
    })
    yield* Effect.forkIn(Effect.forever(recordEnded), scope)
    yield* Effect.forkIn(Effect.forever(Effect.zipRight(signals.committed, Queue.offer(wake, undefined))), scope)
    // The listener starts waiting before the first claim, so no commit falls between them unheard.
    yield* Effect.yieldNow()
    // A full claim may have left more due: ask again at once rather than after the poll's pause. Otherwise the
    // next claim is at the poll, a record or a commit, whichever comes first: a webhook's events go one at a time,
    // so waiting for the poll after each would hold a burst of appends to one event a poll.
    const pause = Effect.raceFirst(Queue.take(wake), Effect.sleep(Duration.millis(options.pollMillis)))
    return yield* Effect.forever(Effect.flatMap(round, (full) => (full ? Effect.void : pause)))
  }).pipe(Effect.scoped)
