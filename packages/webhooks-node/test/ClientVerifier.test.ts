// What the sender signs, the client's receiver-side helper verifies: the two halves of the protocol together.
import { describe, expect, it } from "@effect/vitest"
import { WebhookVerifier } from "@filedata/client"
import { HttpWebhookSender, SealedSecrets } from "@filedata/webhooks-node"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { receiver } from "./Receivers.js"

const event = {
  type: "submissions.created",
  timestamp: "2026-11-28T04:00:00.000Z",
  data: {
    fileId: "file-1",
    SubmissionCounter: 2,
    VisitCounter: 5,
    submissions: [
      { id: "sub_a1", createdDate: "2026-11-28T03:59:59.000Z", content: { email: "a@example.com" } },
      { id: "sub_b2", createdDate: "2026-11-28T03:59:59.500Z", content: { email: "b@example.com", message: "Hi" } }
    ],
    next: "bmV4dA",
    changesNext: "YzE"
  }
}

describe("HttpWebhookSender and the client's WebhookVerifier", () => {
  it.scopedLive("a delivery signed during a rotation verifies with either secret and decodes to the event", () =>
    Effect.gen(function* () {
      const secrets = SealedSecrets.make(Redacted.make(new Uint8Array(32)))
      const [oldSecret, newSecret] = [yield* secrets.generate, yield* secrets.generate]
      const hook = yield* receiver((_, response) => response.writeHead(204).end())
      const sender = yield* HttpWebhookSender.make({ allowPrivateNetworks: true, timeoutMillis: 5_000 })
      const body = JSON.stringify(event)
      yield* sender.send({
        url: hook.url,
        eventId: "evt_42",
        body,
        secrets: [newSecret, oldSecret],
        timeoutMillis: 5_000
      })
      const [delivery] = hook.received
      if (delivery === undefined) throw new Error("nothing delivered")
      for (const secret of [oldSecret, newSecret]) {
        const verified = yield* WebhookVerifier.verify(secret, { headers: delivery.headers, body: delivery.body })
        expect(verified.id).toBe("evt_42")
        expect(verified.event).toEqual(event)
      }
      const stranger = yield* secrets.generate
      const refused = yield* Effect.flip(
        WebhookVerifier.verify(stranger, { headers: delivery.headers, body: delivery.body })
      )
      expect(refused).toMatchObject({ reason: "invalid_signature" })
    })
  )
})
