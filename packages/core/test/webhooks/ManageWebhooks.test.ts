import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { AccessDenied, FileNotFound, type InvalidRequest } from "../../src/shared/FileDataError.js"
import * as RequestSchema from "../../src/shared/RequestSchema.js"
import * as CreateWebhook from "../../src/webhooks/CreateWebhook.js"
import * as ListWebhooks from "../../src/webhooks/ListWebhooks.js"
import * as ManageWebhook from "../../src/webhooks/ManageWebhook.js"
import { maxPerFile, rotationOverlapMillis, WebhookEventNotFound, WebhookNotFound } from "../../src/webhooks/Webhook.js"
import * as WebhookRequest from "../../src/webhooks/WebhookRequest.js"
import { input } from "../utils/Requests.js"
import * as TestFileRepository from "../utils/TestFileRepository.js"
import * as TestRateLimiter from "../utils/TestRateLimiter.js"
import * as TestWebhookPorts from "../utils/TestWebhookPorts.js"
import * as TestWebhookStore from "../utils/TestWebhookStore.js"

const setUp = () => {
  const files = TestFileRepository.make({
    users: [
      { id: "alice", apiKeys: ["alice-key"] },
      { id: "bob", apiKeys: ["bob-key"] }
    ],
    files: [
      { id: "contact", ownerId: "alice" },
      { id: "poll", ownerId: "alice" },
      { id: "survey", ownerId: "bob" }
    ]
  })
  const webhooks = TestWebhookStore.make({
    keys: { "alice-key": "alice", "bob-key": "bob" },
    files: { contact: "alice", poll: "alice", survey: "bob" }
  })
  const limiter = TestRateLimiter.make()
  return {
    webhooks,
    limiter,
    ports: {
      files: files.repository,
      limiter: limiter.limiter,
      webhooks: webhooks.store,
      sender: TestWebhookPorts.sender(),
      secrets: TestWebhookPorts.secrets()
    }
  }
}

const body = (fields: Record<string, unknown>) => input(fields, [])
const issues = (failure: unknown) =>
  (failure as InvalidRequest).issues.map((issue) => `${issue.pointer}: ${issue.detail}`)

describe("webhook management", () => {
  it.effect("admits a request when the effect runs, not when it is built, and at each run", () =>
    Effect.gen(function* () {
      const { ports, limiter } = setUp()
      const parse = WebhookRequest.parser(Schema.Struct({ apiKey: RequestSchema.apiKeyField }))
      const admitted = WebhookRequest.admit(ports, body({ apiKey: "alice-key" }), parse)
      expect(limiter.count("apiKey alice-key")).toBe(0)
      yield* admitted
      yield* admitted
      expect(limiter.count("apiKey alice-key")).toBe(2)
    })
  )

  it.effect("creates a webhook with a secret shown once, sealed in storage, listed without it", () =>
    Effect.gen(function* () {
      const { ports, webhooks, limiter } = setUp()
      const created = yield* CreateWebhook.runWith(
        ports,
        body({ apiKey: "alice-key", fileId: "contact", url: "https://example.com/hook" })
      )
      expect(created.webhook).toMatchObject({ fileId: "contact", url: "https://example.com/hook", enabled: true })
      expect(Redacted.value(created.secret)).toBe("whsec_secret1")
      expect(String(created.secret)).not.toContain("whsec_")
      const [claimable] = yield* Effect.zipRight(
        webhooks.enqueue(created.webhook.id, "{}"),
        webhooks.store.claim({ limit: 1, leaseMillis: 1 })
      )
      expect(claimable?.secrets.current).toBe(`sealed:${created.webhook.id}:whsec_secret1`)
      const listed = yield* ListWebhooks.runWith(ports, body({ apiKey: "alice-key" }))
      expect(listed.map((webhook) => webhook.id)).toEqual([created.webhook.id])
      expect(yield* ListWebhooks.runWith(ports, body({ apiKey: "alice-key", fileId: "poll" }))).toEqual([])
      expect(yield* ListWebhooks.runWith(ports, body({ apiKey: "bob-key" }))).toEqual([])
      // Both quotas count every request.
      expect(limiter.count("apiKey alice-key")).toBe(3)
      expect(limiter.count("clientAddress 203.0.113.7")).toBe(4)
    })
  )

  it.effect("applies the read operations' key rules: 403 for an unknown key or another's file, 404 for no file", () =>
    Effect.gen(function* () {
      const { ports } = setUp()
      const create = (apiKey: string, fileId: string) =>
        Effect.flip(CreateWebhook.runWith(ports, body({ apiKey, fileId, url: "https://example.com/" })))
      expect(yield* create("nobody", "contact")).toEqual(new AccessDenied())
      expect(yield* create("nobody", "missing")).toEqual(new AccessDenied())
      expect(yield* create("alice-key", "survey")).toEqual(new AccessDenied())
      expect(yield* create("alice-key", "missing")).toEqual(new FileNotFound())
      const list = (fields: Record<string, unknown>) => Effect.flip(ListWebhooks.runWith(ports, body(fields)))
      expect(yield* list({ apiKey: "nobody" })).toEqual(new AccessDenied())
      expect(yield* list({ apiKey: "alice-key", fileId: "survey" })).toEqual(new AccessDenied())
      expect(yield* list({ apiKey: "alice-key", fileId: "missing" })).toEqual(new FileNotFound())
    })
  )

  it.effect("answers 404 for a webhook id that is unknown or another user's, 403 for an unknown key first", () =>
    Effect.gen(function* () {
      const { ports } = setUp()
      const bobs = yield* CreateWebhook.runWith(
        ports,
        body({ apiKey: "bob-key", fileId: "survey", url: "https://example.com/" })
      )
      for (const run of [
        ManageWebhook.remove,
        ManageWebhook.enable,
        ManageWebhook.rotateSecret,
        ManageWebhook.deliveries
      ]) {
        expect(yield* Effect.flip(run(ports, body({ apiKey: "alice-key", id: bobs.webhook.id })))).toEqual(
          new WebhookNotFound()
        )
        expect(yield* Effect.flip(run(ports, body({ apiKey: "alice-key", id: "wh_none" })))).toEqual(
          new WebhookNotFound()
        )
        expect(yield* Effect.flip(run(ports, body({ apiKey: "nobody", id: bobs.webhook.id })))).toEqual(
          new AccessDenied()
        )
      }
      expect(
        yield* Effect.flip(
          ManageWebhook.redeliver(ports, body({ apiKey: "alice-key", id: bobs.webhook.id, eventId: "msg_1" }))
        )
      ).toEqual(new WebhookNotFound())
      expect(
        yield* Effect.flip(
          ManageWebhook.redeliver(ports, body({ apiKey: "bob-key", id: bobs.webhook.id, eventId: "msg_none" }))
        )
      ).toEqual(new WebhookEventNotFound())
      // Bob's webhook is untouched.
      expect(Option.isSome(yield* ports.webhooks.find(bobs.webhook.id))).toBe(true)
    })
  )

  it.effect("refuses with a 422 naming the field: a refused URL, unknown members, a limit out of range", () =>
    Effect.gen(function* () {
      const { ports } = setUp()
      const create = (fields: Record<string, unknown>) =>
        Effect.map(Effect.flip(CreateWebhook.runWith(ports, body({ apiKey: "alice-key", ...fields }))), issues)
      expect(yield* create({ fileId: "contact", url: "http://example.com/" })).toEqual(["/url: must use https"])
      expect(yield* create({ fileId: "contact", url: "https://10.0.0.1/" })).toEqual([
        "/url: resolves to a private address"
      ])
      expect(yield* create({ fileId: "contact", url: `https://example.com/${"a".repeat(2048)}` })).toEqual([
        "/url: must be an https URL of at most 2048 characters"
      ])
      expect(yield* create({ fileId: "contact", url: "https://example.com/", secret: "mine" })).toEqual([
        "/secret: is not allowed"
      ])
      expect(yield* create({ url: "https://example.com/" })).toEqual(["/fileId: is required"])
      const deliveries = (limit: unknown) =>
        Effect.map(
          Effect.flip(ManageWebhook.deliveries(ports, body({ apiKey: "alice-key", id: "wh_1", limit }))),
          issues
        )
      expect(yield* deliveries(0)).toEqual(["/limit: must be an integer from 1 to 1000"])
      expect(yield* deliveries(1001)).toEqual(["/limit: must be an integer from 1 to 1000"])
    })
  )

  it.effect(`refuses an eleventh webhook of a file with a 422 naming fileId (at most ${maxPerFile})`, () =>
    Effect.gen(function* () {
      const { ports } = setUp()
      const create = (fileId: string) =>
        CreateWebhook.runWith(ports, body({ apiKey: "alice-key", fileId, url: "https://example.com/" }))
      for (let i = 0; i < maxPerFile; i++) yield* create("contact")
      expect(issues(yield* Effect.flip(create("contact")))).toEqual(["/fileId: has 10 webhooks already"])
      yield* create("poll")
    })
  )

  it.effect("rotates a secret, keeping the old one for the overlap; enables, deletes, redelivers", () =>
    Effect.gen(function* () {
      const { ports, webhooks } = setUp()
      yield* TestClock.adjust(1000)
      const created = yield* CreateWebhook.runWith(
        ports,
        body({ apiKey: "alice-key", fileId: "contact", url: "https://example.com/" })
      )
      const target = { apiKey: "alice-key", id: created.webhook.id }
      const rotated = yield* ManageWebhook.rotateSecret(ports, body(target))
      expect(rotated.id).toBe(created.webhook.id)
      expect(Redacted.value(rotated.secret)).toBe("whsec_secret2")
      const eventId = yield* webhooks.enqueue(created.webhook.id, "{}")
      const [claim] = yield* webhooks.store.claim({ limit: 1, leaseMillis: 10 })
      expect(claim?.secrets).toEqual({
        current: `sealed:${created.webhook.id}:whsec_secret2`,
        previous: Option.some({
          sealed: `sealed:${created.webhook.id}:whsec_secret1`,
          until: 1000 + rotationOverlapMillis
        })
      })
      yield* webhooks.store.disable(created.webhook.id, "gone")
      const enabled = yield* ManageWebhook.enable(ports, body(target))
      expect([enabled.enabled, enabled.disabledReason]).toEqual([true, Option.none()])
      yield* ManageWebhook.redeliver(ports, body({ ...target, eventId }))
      expect(webhooks.events().find((event) => event.id === eventId)?.state).toBe("pending")
      expect(yield* ManageWebhook.deliveries(ports, body(target))).toEqual([])
      yield* ManageWebhook.remove(ports, body(target))
      expect(yield* Effect.flip(ManageWebhook.remove(ports, body(target)))).toEqual(new WebhookNotFound())
    })
  )
})
