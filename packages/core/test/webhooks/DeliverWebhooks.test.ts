import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import type { FileId } from "../../src/shared/FileData.js"
import * as SubmissionSignals from "../../src/sync/SubmissionSignals.js"
import * as DeliverWebhooks from "../../src/webhooks/DeliverWebhooks.js"
import { WebhookSecrets } from "../../src/webhooks/WebhookSecrets.js"
import { type Outcome, WebhookSender } from "../../src/webhooks/WebhookSender.js"
import * as WebhookStore from "../../src/webhooks/WebhookStore.js"
import * as TestWebhookPorts from "../utils/TestWebhookPorts.js"
import * as TestWebhookStore from "../utils/TestWebhookStore.js"

const options = { ...DeliverWebhooks.defaults, retryScheduleMillis: [1000, 60_000], disableAfterMillis: 100_000 }

const claim = (fields: Partial<WebhookStore.Claim> = {}): WebhookStore.Claim => ({
  eventId: "msg_1",
  webhookId: "wh_1",
  url: "https://example.com/",
  body: "{}",
  secrets: { current: "sealed:wh_1:whsec_a", previous: Option.none() },
  attempt: 1,
  step: 0,
  failingSince: Option.none(),
  leaseToken: "t",
  ...fields
})

const answered = (status: number, retryAfterMillis?: number): Outcome => ({
  _tag: "Answered",
  status,
  retryAfterMillis: Option.fromNullable(retryAfterMillis),
  durationMillis: 7
})
const refused: Outcome = { _tag: "NotAnswered", failure: "connection", detail: "refused", durationMillis: 3 }

describe("DeliverWebhooks.decide", () => {
  it("delivers on any 2xx, and only then", () => {
    for (const status of [200, 201, 204, 299])
      expect(DeliverWebhooks.decide(claim(), answered(status), 50, options, 0.5).outcome).toBe("delivered")
    for (const status of [199, 301, 302, 400, 404, 500])
      expect(DeliverWebhooks.decide(claim(), answered(status), 50, options, 0.5).outcome).toBe("retrying")
  })

  it("retries after the schedule's delay for the step, plus at most 10% jitter, then fails", () => {
    const first = DeliverWebhooks.decide(claim(), refused, 10_000, options, 0)
    expect(first).toMatchObject({ outcome: "retrying", nextAttemptAt: Option.some(11_000), step: 1 })
    expect(first.error).toEqual(Option.some("connection: refused"))
    expect(first.status).toEqual(Option.none())
    const jittered = DeliverWebhooks.decide(claim({ step: 1 }), answered(500), 10_000, options, 0.999)
    expect(jittered.nextAttemptAt).toEqual(Option.some(10_000 + Math.round(60_000 * 1.0999)))
    expect(jittered.step).toBe(2)
    const last = DeliverWebhooks.decide(claim({ step: 2 }), answered(500), 10_000, options, 0)
    expect(last).toMatchObject({ outcome: "failed", nextAttemptAt: Option.none(), disable: Option.none() })
  })

  it("honours a longer Retry-After, never a shorter one", () => {
    expect(DeliverWebhooks.decide(claim(), answered(429, 30_000), 0, options, 0).nextAttemptAt).toEqual(
      Option.some(30_000)
    )
    expect(DeliverWebhooks.decide(claim(), answered(503, 10), 0, options, 0).nextAttemptAt).toEqual(Option.some(1000))
  })

  it("disables on 410 at once, and a webhook failing for the disable period", () => {
    expect(DeliverWebhooks.decide(claim(), answered(410), 0, options, 0)).toMatchObject({
      outcome: "failed",
      disable: Option.some("gone")
    })
    const still = DeliverWebhooks.decide(claim({ failingSince: Option.some(1) }), refused, 100_000, options, 0)
    expect(still.outcome).toBe("retrying")
    const over = DeliverWebhooks.decide(claim({ failingSince: Option.some(0) }), refused, 100_000, options, 0)
    expect(over).toMatchObject({ outcome: "failed", disable: Option.some("failing") })
    // A success is never a reason to disable.
    expect(
      DeliverWebhooks.decide(claim({ failingSince: Option.some(0) }), answered(200), 1e9, options, 0).disable
    ).toEqual(Option.none())
  })
})

const setUp = (answer: Parameters<typeof TestWebhookPorts.sender>[0]) => {
  const webhooks = TestWebhookStore.make({ keys: {}, files: { a: "u", b: "u" } })
  const sender = TestWebhookPorts.sender(answer)
  const secrets = TestWebhookPorts.secrets()
  // Storage's commit signal, given by hand: `commit()` is another process's append as the adapter signals it.
  const watchers = new Set<() => void>()
  const signals: SubmissionSignals.SubmissionSignals = {
    changed: () => Effect.succeed(false),
    committed: Effect.async<void>((resume) => {
      const watcher = () => resume(Effect.void)
      watchers.add(watcher)
      return Effect.sync(() => {
        watchers.delete(watcher)
      })
    })
  }
  const commit = () => {
    const woken = [...watchers]
    watchers.clear()
    for (const watcher of woken) watcher()
  }
  const layer = Layer.mergeAll(
    webhooks.layer,
    Layer.succeed(WebhookSender, sender),
    Layer.succeed(WebhookSecrets, secrets),
    Layer.succeed(SubmissionSignals.SubmissionSignals, signals)
  )
  const register = (file: string, url: string) =>
    webhooks.store.create({
      fileId: file as FileId,
      url,
      sealSecret: (id) => Effect.succeed(`sealed:${id}:whsec_${file}`)
    })
  return { webhooks, sender, layer, register, commit, signals }
}

describe("DeliverWebhooks.attempt", () => {
  it.effect("signs with both secrets during a rotation's overlap, and records the attempt", () =>
    Effect.gen(function* () {
      const { webhooks, sender, register } = setUp(undefined)
      const webhook = yield* register("a", "https://a.example/")
      yield* webhooks.store.rotateSecret(webhook.id, `sealed:${webhook.id}:whsec_new`, 60_000)
      yield* webhooks.enqueue(webhook.id, '{"n":1}')
      const [claimed] = yield* webhooks.store.claim({ limit: 1, leaseMillis: 1000 })
      yield* DeliverWebhooks.attempt(
        { webhooks: webhooks.store, sender, secrets: TestWebhookPorts.secrets() },
        options,
        claimed as WebhookStore.Claim
      )
      expect(sender.sent.map((a) => a.secrets.map(Redacted.value))).toEqual([["whsec_new", "whsec_a"]])
      expect(sender.sent[0]).toMatchObject({ eventId: claimed?.eventId, body: '{"n":1}', timeoutMillis: 15_000 })
      expect(webhooks.log(webhook.id).map((d) => [d.outcome, Option.getOrNull(d.status)])).toEqual([["delivered", 200]])
    })
  )

  it.effect("an unreadable secret is a failed attempt on the schedule, and nothing is sent", () =>
    Effect.gen(function* () {
      const { webhooks, sender } = setUp(undefined)
      const webhook = yield* webhooks.store.create({
        fileId: "a" as FileId,
        url: "https://a/",
        sealSecret: () => Effect.succeed("garbage")
      })
      yield* webhooks.enqueue(webhook.id, "{}")
      const [claimed] = yield* webhooks.store.claim({ limit: 1, leaseMillis: 1000 })
      yield* DeliverWebhooks.attempt(
        { webhooks: webhooks.store, sender, secrets: TestWebhookPorts.secrets() },
        options,
        claimed as WebhookStore.Claim
      )
      expect(sender.sent).toEqual([])
      const [logged] = webhooks.log(webhook.id)
      expect(logged?.outcome).toBe("retrying")
      expect(Option.getOrNull(logged?.error ?? Option.none())).toMatch(/^secret_unreadable/)
    })
  )

  it.effect("a sealed secret copied into another webhook's row does not open there: nothing is sent", () =>
    Effect.gen(function* () {
      const { webhooks, sender } = setUp(undefined)
      const secrets = TestWebhookPorts.secrets()
      const owner = yield* webhooks.store.create({
        fileId: "a" as FileId,
        url: "https://a/",
        sealSecret: (id) => secrets.seal(Redacted.make("whsec_a"), id)
      })
      const [ownSealed] = yield* Effect.zipRight(
        webhooks.enqueue(owner.id, "{}"),
        Effect.map(webhooks.store.claim({ limit: 1, leaseMillis: 1000 }), (claims) =>
          claims.map((c) => c.secrets.current)
        )
      )
      const copy = yield* webhooks.store.create({
        fileId: "b" as FileId,
        url: "https://b/",
        sealSecret: () => Effect.succeed(ownSealed as string)
      })
      yield* webhooks.enqueue(copy.id, "{}")
      const [claimed] = yield* webhooks.store.claim({ limit: 1, leaseMillis: 1000 })
      expect(claimed?.webhookId).toBe(copy.id)
      yield* DeliverWebhooks.attempt(
        { webhooks: webhooks.store, sender, secrets },
        options,
        claimed as WebhookStore.Claim
      )
      expect(sender.sent).toEqual([])
      const [logged] = webhooks.log(copy.id)
      expect(logged?.outcome).toBe("retrying")
      expect(Option.getOrNull(logged?.error ?? Option.none())).toMatch(/^secret_unreadable/)
    })
  )
})

describe("DeliverWebhooks.run", () => {
  it.scoped("delivers each webhook's events in order while a hanging receiver holds only its own place", () =>
    Effect.gen(function* () {
      const hanging = yield* Deferred.make<void>()
      const { webhooks, sender, layer, register } = setUp((attempt) =>
        attempt.url.startsWith("https://hang")
          ? Effect.as(Deferred.await(hanging), answered(200))
          : Effect.succeed(answered(200))
      )
      const stuck = yield* register("a", "https://hang.example/")
      const fine = yield* register("b", "https://fine.example/")
      yield* webhooks.enqueue(stuck.id, "stuck-1")
      yield* webhooks.enqueue(stuck.id, "stuck-2")
      for (let i = 0; i < 5; i++) yield* webhooks.enqueue(fine.id, `fine-${i}`)
      const running = yield* Effect.forkScoped(
        Effect.provide(DeliverWebhooks.run({ ...options, concurrency: 2, pollMillis: 500 }), layer)
      )
      for (let round = 0; round < 10; round++) yield* TestClock.adjust(500)
      expect(sender.sent.filter((a) => a.url.startsWith("https://fine")).map((a) => a.body)).toEqual(
        Array.from({ length: 5 }, (_, i) => `fine-${i}`)
      )
      // The hanging webhook's second event waits behind its first: one attempt in flight per webhook.
      expect(
        webhooks
          .events()
          .filter((e) => e.webhookId === stuck.id)
          .map((e) => e.state)
      ).toEqual(["pending", "pending"])
      yield* Deferred.succeed(hanging, undefined)
      for (let round = 0; round < 4; round++) yield* TestClock.adjust(500)
      expect(sender.sent.filter((a) => a.url.startsWith("https://hang")).map((a) => a.body)).toEqual([
        "stuck-1",
        "stuck-2"
      ])
      yield* Fiber.interrupt(running)
    })
  )

  it.scoped("claims a webhook's next event when its attempt ends, not at the next poll", () =>
    Effect.gen(function* () {
      const { webhooks, sender, layer, register } = setUp(() => Effect.succeed(answered(200)))
      const webhook = yield* register("a", "https://fine.example/")
      for (let i = 0; i < 5; i++) yield* webhooks.enqueue(webhook.id, `burst-${i}`)
      yield* Effect.forkScoped(
        Effect.provide(DeliverWebhooks.run({ ...options, concurrency: 4, pollMillis: 60_000 }), layer)
      )
      // The clock never reaches the poll: each end of an attempt wakes the next claim.
      yield* TestClock.adjust(1)
      expect(sender.sent.map((attempt) => attempt.body)).toEqual(Array.from({ length: 5 }, (_, i) => `burst-${i}`))
    })
  )

  it.scoped("claims when storage signals a commit, not at the next poll, and at the poll without one", () =>
    Effect.gen(function* () {
      const { webhooks, sender, layer, register, commit } = setUp(() => Effect.succeed(answered(200)))
      const webhook = yield* register("a", "https://fine.example/")
      yield* Effect.forkScoped(
        Effect.provide(DeliverWebhooks.run({ ...options, concurrency: 4, pollMillis: 60_000 }), layer)
      )
      yield* TestClock.adjust(1)
      // Another process's append: its event is in the outbox, and storage signals the commit.
      yield* webhooks.enqueue(webhook.id, "signalled")
      commit()
      yield* TestClock.adjust(1)
      expect(sender.sent.map((attempt) => attempt.body)).toEqual(["signalled"])
      // A commit whose signal was lost waits for the poll.
      yield* TestClock.adjust(1)
      yield* webhooks.enqueue(webhook.id, "unsignalled")
      yield* TestClock.adjust(59_000)
      expect(sender.sent).toHaveLength(1)
      yield* TestClock.adjust(1_000)
      expect(sender.sent.map((attempt) => attempt.body)).toEqual(["signalled", "unsignalled"])
    })
  )

  it.scoped("a commit signalled while a claim runs wakes the next claim, not the poll", () =>
    Effect.gen(function* () {
      const { webhooks, sender, register, commit, signals } = setUp(() => Effect.succeed(answered(200)))
      const webhook = yield* register("a", "https://fine.example/")
      let claims = 0
      // The first claim has read nothing due when another process's append commits and is signalled.
      const racedStore: WebhookStore.WebhookStore = {
        ...webhooks.store,
        claim: (options) =>
          Effect.tap(webhooks.store.claim(options), () =>
            ++claims === 1
              ? Effect.zipRight(
                  webhooks.enqueue(webhook.id, "during-claim"),
                  Effect.sync(() => commit())
                )
              : Effect.void
          )
      }
      const layer = Layer.mergeAll(
        Layer.succeed(WebhookStore.WebhookStore, racedStore),
        Layer.succeed(WebhookSender, sender),
        Layer.succeed(WebhookSecrets, TestWebhookPorts.secrets()),
        Layer.succeed(SubmissionSignals.SubmissionSignals, signals)
      )
      yield* Effect.forkScoped(
        Effect.provide(DeliverWebhooks.run({ ...options, concurrency: 4, pollMillis: 60_000 }), layer)
      )
      yield* TestClock.adjust(1)
      expect(sender.sent.map((attempt) => attempt.body)).toEqual(["during-claim"])
    })
  )

  it.scoped("records the attempts that end during a record together, in one call to the store", () =>
    Effect.gen(function* () {
      const { webhooks, sender, register, signals } = setUp(() => Effect.succeed(answered(200)))
      const gate = yield* Deferred.make<void>()
      const batches: Array<number> = []
      // The first record waits, as one waits for a busy store; the attempts ending meanwhile queue behind it.
      const slowStore: WebhookStore.WebhookStore = {
        ...webhooks.store,
        record: (attempted) =>
          Effect.zipRight(
            batches.length === 0
              ? Effect.zipRight(
                  Effect.sync(() => batches.push(attempted.length)),
                  Deferred.await(gate)
                )
              : Effect.sync(() => batches.push(attempted.length)),
            webhooks.store.record(attempted)
          )
      }
      const layer = Layer.mergeAll(
        Layer.succeed(WebhookStore.WebhookStore, slowStore),
        Layer.succeed(WebhookSender, sender),
        Layer.succeed(WebhookSecrets, TestWebhookPorts.secrets()),
        Layer.succeed(SubmissionSignals.SubmissionSignals, signals)
      )
      const first = yield* register("a", "https://first.example/")
      yield* webhooks.enqueue(first.id, "first")
      yield* Effect.forkScoped(
        Effect.provide(DeliverWebhooks.run({ ...options, concurrency: 8, pollMillis: 500 }), layer)
      )
      yield* TestClock.adjust(1)
      expect(batches).toEqual([1])
      for (let i = 0; i < 5; i++) {
        const webhook = yield* register("b", `https://w${i}.example/`)
        yield* webhooks.enqueue(webhook.id, `w${i}`)
      }
      yield* TestClock.adjust(500)
      expect(sender.sent).toHaveLength(6)
      yield* Deferred.succeed(gate, undefined)
      yield* TestClock.adjust(1)
      expect(batches).toEqual([1, 5])
      expect(webhooks.events().every((event) => event.state === "delivered")).toBe(true)
    })
  )

  it.scoped("an attempt that dies frees its place, and its event comes back when the lease runs out", () =>
    Effect.gen(function* () {
      let calls = 0
      const { webhooks, sender, layer, register } = setUp(() =>
        ++calls === 1 ? Effect.die(new Error("a sender's bug")) : Effect.succeed(answered(200))
      )
      const dying = yield* register("a", "https://dying.example/")
      const other = yield* register("b", "https://other.example/")
      yield* webhooks.enqueue(dying.id, "dies")
      yield* webhooks.enqueue(other.id, "other")
      yield* Effect.forkScoped(
        Effect.provide(DeliverWebhooks.run({ ...options, concurrency: 1, pollMillis: 500 }), layer)
      )
      yield* TestClock.adjust(500)
      expect(sender.sent.map((attempt) => attempt.body)).toEqual(["other"])
      yield* TestClock.adjust(options.timeoutMillis + DeliverWebhooks.leaseMarginMillis)
      expect(sender.sent.map((attempt) => attempt.body)).toEqual(["other", "dies"])
    })
  )

  it.scoped("keeps at most `concurrency` attempts in flight", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      let inFlight = 0
      let most = 0
      const { webhooks, layer, register } = setUp(() =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            inFlight++
            most = Math.max(most, inFlight)
          }),
          () => Effect.as(Deferred.await(release), answered(200)),
          () => Effect.sync(() => inFlight--)
        )
      )
      for (let i = 0; i < 6; i++) {
        const webhook = yield* register(i % 2 === 0 ? "a" : "b", `https://w${i}.example/`)
        yield* webhooks.enqueue(webhook.id, "{}")
      }
      yield* Effect.forkScoped(
        Effect.provide(DeliverWebhooks.run({ ...options, concurrency: 3, pollMillis: 500 }), layer)
      )
      for (let round = 0; round < 4; round++) yield* TestClock.adjust(500)
      expect(most).toBe(3)
      yield* Deferred.succeed(release, undefined)
      for (let round = 0; round < 4; round++) yield* TestClock.adjust(500)
      expect(most).toBe(3)
      expect(webhooks.events().every((event) => event.state === "delivered")).toBe(true)
    })
  )
})
