import { describe, expect, it } from "@effect/vitest"
import { WebhookVerifier } from "@filedata/client"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { Webhook } from "standardwebhooks"

// The Standard Webhooks test vector (the reference libraries' tests).
const vector = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
}
const vectorHeaders = {
  "webhook-id": vector.id,
  "webhook-timestamp": String(vector.timestamp),
  "webhook-signature": vector.signature
}

const event = {
  type: "submissions.created",
  timestamp: "2021-02-25T15:02:10.000Z",
  data: {
    fileId: "file-1",
    SubmissionCounter: 3,
    VisitCounter: 10,
    submissions: [
      {
        id: "sub_Vb2kQe8WfR1xNc4TgH7p",
        createdDate: "2021-02-25T15:02:09.123Z",
        content: { email: "a@example.com", message: "Hello" }
      }
    ],
    next: "c3VibWlzc2lvbi1jdXJzb3I",
    changesNext: "Y2hhbmdlLWN1cnNvcg"
  }
}

const erased = {
  type: "submissions.erased",
  timestamp: "2021-02-25T15:02:10.000Z",
  data: {
    fileId: "file-1",
    SubmissionCounter: 2,
    VisitCounter: 10,
    ids: ["sub_Vb2kQe8WfR1xNc4TgH7p"],
    changesNext: "Y2hhbmdlLWN1cnNvcg"
  }
}

const reasonOf = <A, R>(effect: Effect.Effect<A, WebhookVerifier.WebhookVerificationError | Error, R>) =>
  Effect.match(effect, {
    onFailure: (error) => ("reason" in error ? error.reason : error.message),
    onSuccess: () => "verified"
  })

const atVectorTime = (offsetSeconds = 0) => TestClock.setTime((vector.timestamp + offsetSeconds) * 1000)

describe("WebhookVerifier", () => {
  it.effect("the published test vector authenticates, within 5 minutes either way of its timestamp", () =>
    Effect.gen(function* () {
      const verifier = yield* WebhookVerifier.make({ secrets: [vector.secret] })
      for (const offset of [0, 300, -300]) {
        yield* atVectorTime(offset)
        const authenticated = yield* verifier.authenticate({ headers: vectorHeaders, body: vector.body })
        expect(authenticated).toEqual({ id: vector.id, timestampSeconds: vector.timestamp, body: vector.body })
      }
      // The same bytes given as bytes, and the headers as a Headers object.
      const bytes = yield* verifier.authenticate({
        headers: new Headers(vectorHeaders),
        body: new TextEncoder().encode(vector.body)
      })
      expect(bytes.body).toBe(vector.body)
      // Signed right, but not an event of filedata's.
      expect(yield* reasonOf(verifier.verify({ headers: vectorHeaders, body: vector.body }))).toBe("invalid_body")
    })
  )

  it.effect("refuses a changed body, id or timestamp, another secret, and a stale or future timestamp", () =>
    Effect.gen(function* () {
      yield* atVectorTime()
      const verifier = yield* WebhookVerifier.make({ secrets: [Redacted.make(vector.secret)] })
      const reason = (headers: Record<string, string>, body = vector.body) =>
        reasonOf(verifier.authenticate({ headers: { ...vectorHeaders, ...headers }, body }))
      expect(yield* reason({}, '{"test": 2432232315}')).toBe("invalid_signature")
      expect(yield* reason({ "webhook-id": "msg_other" })).toBe("invalid_signature")
      expect(yield* reason({ "webhook-timestamp": String(vector.timestamp + 1) })).toBe("invalid_signature")
      expect(yield* reason({ "webhook-signature": "v1,g0hN9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" })).toBe(
        "invalid_signature"
      )
      expect(yield* reason({ "webhook-signature": "v1a,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" })).toBe(
        "invalid_signature"
      )
      expect(yield* reason({ "webhook-signature": "v1,not base64!" })).toBe("invalid_signature")
      expect(yield* reason({ "webhook-signature": "" })).toBe("invalid_signature")
      expect(yield* reason({ "webhook-timestamp": "1614265330.5" })).toBe("invalid_timestamp")
      expect(yield* reason({ "webhook-timestamp": "" })).toBe("invalid_timestamp")
      const other = yield* WebhookVerifier.make({ secrets: [`whsec_${btoa("another secret of some length")}`] })
      expect(yield* reasonOf(other.authenticate({ headers: vectorHeaders, body: vector.body }))).toBe(
        "invalid_signature"
      )
      for (const offset of [301, -301]) {
        yield* atVectorTime(offset)
        expect(yield* reason({})).toBe("stale_timestamp")
      }
      yield* atVectorTime()
      const { "webhook-signature": _, ...unsigned } = vectorHeaders
      expect(yield* reasonOf(verifier.authenticate({ headers: unsigned, body: vector.body }))).toBe("missing_headers")
    })
  )

  it.effect("any v1 entry may match: a rotation's two signatures, with either secret alone", () =>
    Effect.gen(function* () {
      yield* atVectorTime()
      const newSecret = `whsec_${btoa(String.fromCharCode(...new Array(32).fill(7)))}`
      const newSignature = new Webhook(newSecret).sign(vector.id, new Date(vector.timestamp * 1000), vector.body)
      const headers = { ...vectorHeaders, "webhook-signature": `${newSignature} ${vector.signature}` }
      for (const secrets of [[vector.secret], [newSecret], [newSecret, vector.secret]]) {
        const verifier = yield* WebhookVerifier.make({ secrets })
        expect((yield* verifier.authenticate({ headers, body: vector.body })).id).toBe(vector.id)
      }
    })
  )

  it.effect("decodes a delivery signed by the reference library into a typed event of either type", () =>
    Effect.gen(function* () {
      yield* atVectorTime()
      const body = JSON.stringify(event)
      const signature = new Webhook(vector.secret).sign("evt_1", new Date(vector.timestamp * 1000), body)
      const headers = {
        "webhook-id": "evt_1",
        "webhook-timestamp": String(vector.timestamp),
        "webhook-signature": signature
      }
      const verified = yield* WebhookVerifier.verify(vector.secret, { headers, body })
      expect(verified.id).toBe("evt_1")
      expect(verified.event).toEqual(event)
      expect(verified.event.type === "submissions.created" && verified.event.data.submissions[0]?.id).toBe(
        "sub_Vb2kQe8WfR1xNc4TgH7p"
      )

      const sign = (text: string) => ({
        headers: {
          ...headers,
          "webhook-signature": new Webhook(vector.secret).sign("evt_1", new Date(vector.timestamp * 1000), text)
        },
        body: text
      })
      expect((yield* WebhookVerifier.verify(vector.secret, sign(JSON.stringify(erased)))).event).toEqual(erased)
      for (const wrong of [
        { ...event, type: "submissions.deleted" },
        { ...event, type: "submissions.erased" },
        { ...erased, data: { ...erased.data, ids: ["not-an-id"] } },
        { ...event, data: { ...event.data, next: undefined } },
        { ...event, data: { ...event.data, changesNext: undefined } },
        { ...event, data: { ...event.data, SubmissionCounter: -1 } },
        { ...event, data: { ...event.data, submissions: [{ createdDate: "yesterday", content: {} }] } }
      ]) {
        expect(yield* reasonOf(WebhookVerifier.verify(vector.secret, sign(JSON.stringify(wrong))))).toBe("invalid_body")
      }
      expect(yield* reasonOf(WebhookVerifier.verify(vector.secret, sign("{not json")))).toBe("invalid_body")
      expect(yield* reasonOf(WebhookVerifier.make({ secrets: ["whsec_!!!"] }))).toBe(
        "a webhook secret is whsec_ followed by base64"
      )
    })
  )
})
