/**
 * The `WebhookStore` port in memory for the core's unit tests: registrations, events and the log as plain
 * arrays, with claims and leases as the conformance suite describes them.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { type FileId, timestampFromEpochMillis, type UserId } from "../../src/shared/FileData.js"
import * as Webhook from "../../src/webhooks/Webhook.js"
import * as WebhookStore from "../../src/webhooks/WebhookStore.js"

interface Registration {
  webhook: Webhook.Webhook
  secret: string
  previous: Option.Option<{ readonly sealed: string; readonly until: number }>
  failingSince: Option.Option<number>
}

interface Event {
  readonly id: string
  readonly webhookId: string
  readonly body: string
  readonly createdAt: number
  state: "pending" | "delivered" | "failed"
  step: number
  attempts: number
  nextAttemptAt: number
  lease: Option.Option<{ readonly until: number; readonly token: string }>
}

export interface TestWebhookStore {
  readonly store: WebhookStore.WebhookStore
  readonly layer: Layer.Layer<WebhookStore.WebhookStore>
  /** Adds an event for the webhook, as an append's outbox would. */
  readonly enqueue: (webhookId: string, body: string) => Effect.Effect<string>
  readonly events: () => ReadonlyArray<Event>
  readonly log: (webhookId: string) => ReadonlyArray<Webhook.Delivery>
}

/** `keys` maps a key's text to its user, `files` a file id to its owner. */
export const make = (spec: {
  readonly keys: Readonly<Record<string, string>>
  readonly files: Readonly<Record<string, string>>
}): TestWebhookStore => {
  const registrations: Array<Registration> = []
  const events: Array<Event> = []
  const logs = new Map<string, Array<Webhook.Delivery>>()
  let counter = 0
  const find = (id: string) => registrations.find((r) => r.webhook.id === id)
  const giveUp = (id: string) => {
    for (const event of events) if (event.webhookId === id && event.state === "pending") event.state = "failed"
  }

  const recordOne = (claim: WebhookStore.Claim, result: WebhookStore.AttemptResult): void => {
    const event = events.find((e) => e.id === claim.eventId)
    if (event === undefined || Option.getOrUndefined(event.lease)?.token !== claim.leaseToken) return
    event.state = result.outcome === "retrying" ? "pending" : result.outcome
    event.step = result.step
    event.nextAttemptAt = Option.getOrElse(result.nextAttemptAt, () => Number.POSITIVE_INFINITY)
    event.lease = Option.none()
    const log = logs.get(claim.webhookId) ?? []
    log.unshift({
      eventId: claim.eventId,
      attempt: claim.attempt,
      at: timestampFromEpochMillis(result.at),
      status: result.status,
      outcome: result.outcome,
      error: result.error,
      durationMillis: result.durationMillis,
      nextAttemptAt: Option.map(result.nextAttemptAt, timestampFromEpochMillis)
    })
    logs.set(claim.webhookId, log)
    const r = find(claim.webhookId) as Registration
    r.failingSince =
      result.outcome === "delivered" ? Option.none() : Option.orElse(r.failingSince, () => Option.some(result.at))
    if (Option.isSome(result.disable)) {
      r.webhook = { ...r.webhook, enabled: false, disabledReason: result.disable }
      giveUp(claim.webhookId)
    }
  }
  const store: WebhookStore.WebhookStore = {
    ownerOfKey: (apiKey) =>
      Effect.sync(() => Option.fromNullable(spec.keys[Redacted.value(apiKey)] as UserId | undefined)),
    create: (input) =>
      Effect.gen(function* () {
        if (registrations.filter((r) => r.webhook.fileId === input.fileId).length >= Webhook.maxPerFile) {
          return yield* new Webhook.WebhookLimitReached({ limit: Webhook.maxPerFile })
        }
        const now = yield* Clock.currentTimeMillis
        const id = `wh_${++counter}`
        const webhook: Webhook.Webhook = {
          id,
          fileId: input.fileId,
          ownerId: spec.files[input.fileId] as UserId,
          url: input.url,
          enabled: true,
          createdAt: timestampFromEpochMillis(now),
          disabledReason: Option.none()
        }
        registrations.push({
          webhook,
          secret: yield* input.sealSecret(id),
          previous: Option.none(),
          failingSince: Option.none()
        })
        return webhook
      }),
    list: ({ ownerId, fileId }) =>
      Effect.sync(() =>
        registrations
          .map((r) => r.webhook)
          .filter((w) => w.ownerId === ownerId && Option.getOrElse(fileId, () => w.fileId) === w.fileId)
      ),
    listAll: (fileId: Option.Option<FileId>) =>
      Effect.sync(() =>
        registrations.map((r) => r.webhook).filter((w) => Option.getOrElse(fileId, () => w.fileId) === w.fileId)
      ),
    find: (id) => Effect.sync(() => Option.map(Option.fromNullable(find(id)), (r) => r.webhook)),
    remove: (id) =>
      Effect.sync(() => {
        const index = registrations.findIndex((r) => r.webhook.id === id)
        if (index < 0) return false
        registrations.splice(index, 1)
        for (let i = events.length - 1; i >= 0; i--) if (events[i]?.webhookId === id) events.splice(i, 1)
        logs.delete(id)
        return true
      }),
    enable: (id) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(find(id)), (r) => {
          r.webhook = { ...r.webhook, enabled: true, disabledReason: Option.none() }
          r.failingSince = Option.none()
          return r.webhook
        })
      ),
    disable: (id, reason) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(find(id)), (r) => {
          r.webhook = { ...r.webhook, enabled: false, disabledReason: Option.some(reason) }
          giveUp(id)
          return r.webhook
        })
      ),
    rotateSecret: (id, sealed, until) =>
      Effect.sync(() => {
        const r = find(id)
        if (r === undefined) return false
        r.previous = Option.some({ sealed: r.secret, until })
        r.secret = sealed
        return true
      }),
    deliveries: (id, limit) => Effect.sync(() => (logs.get(id) ?? []).slice(0, limit)),
    redeliver: (id, eventId) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const event = events.find((e) => e.webhookId === id && e.id === eventId)
        if (event === undefined) return false
        event.state = "pending"
        event.step = 0
        event.nextAttemptAt = now
        return true
      }),
    claim: ({ limit, leaseMillis }) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const claims: Array<WebhookStore.Claim> = []
        const heads = new Map<string, Event>()
        for (const event of events) {
          if (event.state === "pending" && !heads.has(event.webhookId)) heads.set(event.webhookId, event)
        }
        const due = [...heads.values()]
          .filter((event) => find(event.webhookId)?.webhook.enabled === true)
          .filter((event) => event.nextAttemptAt <= now)
          .filter((event) => Option.isNone(event.lease) || event.lease.value.until <= now)
          .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
          .slice(0, limit)
        for (const event of due) {
          const r = find(event.webhookId) as Registration
          const token = `lease-${++counter}`
          event.lease = Option.some({ until: now + leaseMillis, token })
          event.attempts++
          claims.push({
            eventId: event.id,
            webhookId: event.webhookId,
            url: r.webhook.url,
            body: event.body,
            secrets: { current: r.secret, previous: Option.filter(r.previous, (p) => p.until > now) },
            attempt: event.attempts,
            step: event.step,
            failingSince: r.failingSince,
            leaseToken: token
          })
        }
        return claims
      }),
    record: (attempts) =>
      Effect.sync(() => {
        for (const { claim, result } of attempts) recordOne(claim, result)
      }),
    backlog: Effect.sync(() => {
      const waiting = events.filter((e) => e.state === "pending")
      return {
        waiting: waiting.length,
        oldestCreatedAt: Option.fromNullable(waiting[0]?.createdAt)
      }
    })
  }
  return {
    store,
    layer: Layer.succeed(WebhookStore.WebhookStore, store),
    enqueue: (webhookId, body) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const id = `msg_${++counter}`
        events.push({
          id,
          webhookId,
          body,
          createdAt: now,
          state: "pending",
          step: 0,
          attempts: 0,
          nextAttemptAt: now,
          lease: Option.none()
        })
        return id
      }),
    events: () => events,
    log: (webhookId) => logs.get(webhookId) ?? []
  }
}
