/**
 * The behaviour every storage adapter owes the webhooks, as one suite that runs unchanged against each adapter
 * of the `WebhookStore` port together with its `OperatorStore` (whose appends write the outbox).
 *
 * @since 0.2.0
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Append,
  ChangeCursor,
  FileData,
  type FileDataError,
  FileRepository,
  OperatorStore,
  SubmissionCursor,
  Webhook,
  WebhookStore
} from "@filedata/core"
import { AppendDocument, FixtureDocument } from "@filedata/fixture"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"

/**
 * Builds the adapter under test. Every call must give an empty store of its own, released with the layer.
 *
 * @since 0.2.0
 * @category models
 */
export type MakeStorage = () => Layer.Layer<
  FileRepository.FileRepository | OperatorStore.OperatorStore | WebhookStore.WebhookStore,
  FileDataError.StorageUnavailable
>

const fileId = (id: string): FileData.FileId => FileData.FileId.make(id)
const apiKey = (text: string): FileData.ApiKey => Redacted.make(FileData.ApiKeyText.make(text))
const KEY = "key-of-user-1"

const fixture = {
  users: [
    { id: "user-1", apiKeys: [KEY] },
    { id: "user-2", apiKeys: ["key-of-user-2"] }
  ],
  files: ["f1", "f2", "f3"].map((id) => ({
    id,
    userId: id === "f3" ? "user-2" : "user-1",
    name: `File ${id}`,
    creationDate: "2024-01-01T00:00:00.000Z",
    VisitCounter: 5,
    submissions: [{ createdDate: "2024-01-01T00:00:00.000Z", content: { old: "yes" } }]
  }))
}

const setUp = Effect.flatMap(OperatorStore.OperatorStore, (store) =>
  Effect.flatMap(Effect.orDie(FixtureDocument.decode(fixture)), store.importFixture)
)

const submissions = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ({
    // Descending instants: reply order is not insertion order, and each event must follow reply order.
    createdDate: new Date(Date.UTC(2024, 5, 1) - (from + i) * 1000).toISOString(),
    content: { n: String(from + i) }
  }))

const append = (document: unknown) =>
  Effect.flatMap(OperatorStore.OperatorStore, (store) =>
    Effect.flatMap(Effect.orDie(AppendDocument.decode(document)), store.appendSubmissions)
  )

// Appends `count` submissions to one file, numbered from `from`.
const appendTo = (file: string, count: number, from = 0) =>
  append({ files: [{ id: file, submissions: submissions(count, from) }] })

const register = (file: string, url = `https://example.com/hooks/${file}`) =>
  Effect.flatMap(WebhookStore.WebhookStore, (store) =>
    // The store seals for the id it gives: the sealed text names it, so the cases see the id reach the seal.
    store.create({ fileId: fileId(file), url, sealSecret: (id) => Effect.succeed(`sealed-${url}-${id}`) })
  )

const claim = (limit = 100, leaseMillis = 30_000) =>
  Effect.flatMap(WebhookStore.WebhookStore, (store) => store.claim({ limit, leaseMillis }))

interface EventBody {
  readonly type: string
  readonly timestamp: string
  readonly data: {
    readonly fileId: string
    readonly SubmissionCounter: number
    readonly VisitCounter: number
    readonly submissions: ReadonlyArray<{
      readonly id: string
      readonly createdDate: string
      readonly content: Record<string, string>
    }>
    readonly ids?: ReadonlyArray<string>
    readonly next: string
    readonly changesNext: string
  }
}

const body = (claimed: WebhookStore.Claim): EventBody => JSON.parse(claimed.body)

const result = (
  outcome: Webhook.DeliveryOutcome,
  at: number,
  fields: Partial<WebhookStore.AttemptResult> = {}
): WebhookStore.AttemptResult => ({
  at,
  status: Option.some(outcome === "delivered" ? 200 : 500),
  outcome,
  error: Option.none(),
  durationMillis: 12,
  nextAttemptAt: Option.none(),
  step: 0,
  disable: Option.none(),
  ...fields
})

/**
 * Registers the suite under `name`.
 *
 * @since 0.2.0
 * @category suites
 */
export const suite = (name: string, makeStorage: MakeStorage): void => {
  // Every case runs on the fixture, in a store of its own, and is handed the webhook store it looks at.
  const test = <E>(
    title: string,
    body: (
      store: WebhookStore.WebhookStore
    ) => Effect.Effect<void, E, FileRepository.FileRepository | OperatorStore.OperatorStore | WebhookStore.WebhookStore>
  ) =>
    it.effect(title, () =>
      Effect.zipRight(setUp, Effect.flatMap(WebhookStore.WebhookStore, body)).pipe(Effect.provide(makeStorage()))
    )

  describe(name, { timeout: 60_000 }, () => {
    test("registers, finds, lists by owner and file, enables, disables and removes webhooks", (store) =>
      Effect.gen(function* () {
        // Listed oldest first: each one a millisecond after the one before.
        const first = yield* register("f1")
        yield* TestClock.adjust(1)
        const second = yield* register("f2")
        yield* TestClock.adjust(1)
        const other = yield* register("f3")
        expect(first).toMatchObject({ fileId: "f1", ownerId: "user-1", url: "https://example.com/hooks/f1" })
        expect(first.enabled).toBe(true)
        expect(first.disabledReason).toEqual(Option.none())
        expect(first.id).not.toEqual(second.id)
        expect(yield* store.find(first.id)).toEqual(Option.some(first))
        expect(yield* store.find("wh_unknown")).toEqual(Option.none())
        const ids = (list: ReadonlyArray<Webhook.Webhook>) => list.map((webhook) => webhook.id)
        expect(ids(yield* store.list({ ownerId: FileData.UserId.make("user-1"), fileId: Option.none() }))).toEqual([
          first.id,
          second.id
        ])
        expect(
          ids(yield* store.list({ ownerId: FileData.UserId.make("user-1"), fileId: Option.some(fileId("f2")) }))
        ).toEqual([second.id])
        expect(
          ids(yield* store.list({ ownerId: FileData.UserId.make("user-1"), fileId: Option.some(fileId("f3")) }))
        ).toEqual([])
        expect(ids(yield* store.listAll(Option.none()))).toEqual([first.id, second.id, other.id])

        const disabled = yield* store.disable(first.id, "operator")
        expect(Option.map(disabled, (webhook) => [webhook.enabled, webhook.disabledReason])).toEqual(
          Option.some([false, Option.some("operator")])
        )
        const enabled = yield* store.enable(first.id)
        expect(Option.map(enabled, (webhook) => [webhook.enabled, webhook.disabledReason])).toEqual(
          Option.some([true, Option.none()])
        )
        expect(yield* store.enable("wh_unknown")).toEqual(Option.none())
        expect(yield* store.remove(first.id)).toBe(true)
        expect(yield* store.remove(first.id)).toBe(false)
        expect(yield* store.find(first.id)).toEqual(Option.none())
      }))

    test("refuses an eleventh webhook of a file, and takes one again after a removal", (store) =>
      Effect.gen(function* () {
        const made = yield* Effect.forEach(
          Array.from({ length: Webhook.maxPerFile }, (_, i) => i),
          (i) => register("f1", `https://example.com/${i}`)
        )
        const refused = yield* Effect.flip(register("f1", "https://example.com/one-more"))
        expect(refused).toEqual(new Webhook.WebhookLimitReached({ limit: Webhook.maxPerFile }))
        yield* register("f2")
        yield* store.remove((made[0] as Webhook.Webhook).id)
        yield* register("f1", "https://example.com/again")
      }))

    test("writes one event per file and per 100 appended submissions for every enabled webhook", (store) =>
      Effect.gen(function* () {
        const a = yield* register("f1", "https://a.example/")
        const b = yield* register("f1", "https://b.example/")
        const off = yield* register("f1", "https://off.example/")
        const f2 = yield* register("f2")
        yield* store.disable(off.id, "operator")
        yield* append({
          files: [
            { id: "f1", submissions: submissions(250), VisitCounter: 9 },
            { id: "f2", submissions: submissions(1, 1000) },
            { id: "f3", submissions: submissions(3) }
          ]
        })
        // One attempt per webhook at a time: only each webhook's first event is due.
        const claimed = yield* claim()
        expect(claimed.map((c) => c.webhookId).sort()).toEqual([a.id, b.id, f2.id].sort())
        const first = claimed.find((c) => c.webhookId === a.id) as WebhookStore.Claim
        expect(first).toMatchObject({ url: "https://a.example/", attempt: 1, step: 0 })
        expect(first.secrets).toEqual({ current: `sealed-https://a.example/-${a.id}`, previous: Option.none() })
        expect(first.eventId).toMatch(/^[^.]+$/)

        // Every event of webhook a, delivered in turn, carries the 250 submissions in reply order.
        const events: Array<EventBody> = []
        let next: WebhookStore.Claim | undefined = first
        while (next !== undefined) {
          events.push(body(next))
          yield* store.record([{ claim: next, result: result("delivered", 0) }])
          next = (yield* claim()).find((c) => c.webhookId === a.id)
        }
        expect(events.map((event) => event.data.submissions.length)).toEqual([100, 100, 50])
        // Each event covers the next 100 submissions in commit order, listed in reply order (instants go down).
        const sent = events.flatMap((event) => event.data.submissions)
        const expected = [0, 100, 200].flatMap((from) =>
          submissions(250)
            .slice(from, from + 100)
            .map((submission) => ({ ...submission, createdDate: new Date(submission.createdDate).toISOString() }))
            .reverse()
        )
        expect(sent.map(({ createdDate, content }) => ({ createdDate, content }))).toEqual(expected)
        expect(new Set(sent.map((submission) => submission.id)).size).toBe(250)
        for (const event of events) {
          expect(event.type).toBe("submissions.created")
          expect(event.timestamp).toBe("1970-01-01T00:00:00.000Z")
          expect(event.data).toMatchObject({ fileId: "f1", SubmissionCounter: 251, VisitCounter: 9 })
        }
        // next continues the incremental read after the event's latest submission: the first event holds the
        // latest instants of all.
        const files = yield* FileRepository.FileRepository
        for (const [i, event] of events.entries()) {
          const position = SubmissionCursor.decode(fileId("f1"), event.data.next)
          expect(Option.isSome(position)).toBe(true)
          const page = yield* files.readSubmissions(fileId("f1"), {
            after: Option.getOrThrow(position),
            limit: 1000
          })
          expect(page.entries.length).toBe([0, 100, 200][i])
        }
        // changesNext is a feed cursor of the file, further on with each event.
        const positions = events.map((event) =>
          Number(Option.getOrThrow(ChangeCursor.decode(fileId("f1"), event.data.changesNext)))
        )
        expect(positions).toEqual([...positions].sort((a, b) => a - b))
        expect(new Set(positions).size).toBe(3)
        const backlog = yield* store.backlog
        // b's three and f2's one are still waiting.
        expect(backlog.waiting).toBe(4)
      }))

    test("an append that rolls back writes no event", (store) =>
      Effect.gen(function* () {
        yield* register("f1")
        const refused = yield* Effect.flip(
          append({
            files: [
              { id: "f1", submissions: submissions(5) },
              { id: "no-such-file", submissions: [] }
            ]
          })
        )
        expect(refused._tag).toBe("FixtureInvalid")
        // A stream that fails after its submissions were staged.
        const operator = yield* OperatorStore.OperatorStore
        const failing = Stream.concat(
          Append.entries({ files: [{ id: fileId("f1"), submissions: [{ createdDate: 0, contentJson: "{}" }] }] }),
          Stream.fail("cut off" as const)
        )
        expect(yield* Effect.flip(operator.appendSubmissions(failing))).toBe("cut off")
        expect(yield* claim()).toEqual([])
        expect((yield* store.backlog).waiting).toBe(0)
      }))

    test("a claim made while an append is under way sees its events only with its submissions", () =>
      Effect.gen(function* () {
        yield* register("f1")
        const store = yield* OperatorStore.OperatorStore
        const files = yield* FileRepository.FileRepository
        const reached = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const entries = Stream.concat(
          Append.entries({
            files: [{ id: fileId("f1"), submissions: [{ createdDate: 1, contentJson: '{"x":"1"}' }] }]
          }),
          Stream.fromEffect(Effect.zipRight(Deferred.succeed(reached, undefined), Deferred.await(release))).pipe(
            Stream.drain
          )
        )
        const appending = yield* Effect.fork(store.appendSubmissions(entries))
        yield* Deferred.await(reached)
        const claiming = yield* Effect.fork(
          Effect.flatMap(claim(), (claims) =>
            Effect.map(files.findAccess(apiKey(KEY), fileId("f1")), (access) => ({
              claims,
              counter: Option.map(access.file, (file) => file.SubmissionCounter)
            }))
          )
        )
        yield* Effect.yieldNow()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(appending)
        const seen = yield* Fiber.join(claiming)
        // Either the claim ran before the commit and found nothing, or after it and the submission is there.
        if (seen.claims.length > 0) expect(seen.counter).toEqual(Option.some(2))
        const all = [...seen.claims, ...(yield* claim())]
        expect(all.length).toBe(1)
      }))

    test("a lease that runs out lets the event be claimed again, and the stale holder records nothing", (store) =>
      Effect.gen(function* () {
        const webhook = yield* register("f1")
        yield* appendTo("f1", 1)
        const [first] = yield* claim(10, 1000)
        expect(first?.attempt).toBe(1)
        expect(yield* claim(10, 1000)).toEqual([])
        yield* TestClock.adjust(999)
        expect(yield* claim(10, 1000)).toEqual([])
        yield* TestClock.adjust(1)
        const [again] = yield* claim(10, 1000)
        expect(again?.eventId).toBe(first?.eventId)
        expect(again?.attempt).toBe(2)
        yield* store.record([{ claim: first as WebhookStore.Claim, result: result("delivered", 1000) }])
        expect(yield* store.deliveries(webhook.id, 10)).toEqual([])
        yield* store.record([{ claim: again as WebhookStore.Claim, result: result("delivered", 1000) }])
        const log = yield* store.deliveries(webhook.id, 10)
        expect(log.map((delivery) => [delivery.eventId, delivery.attempt, delivery.outcome])).toEqual([
          [first?.eventId, 2, "delivered"]
        ])
      }))

    test("records a batch at once: each event moves on, and a stale claim among them changes nothing", (store) =>
      Effect.gen(function* () {
        const one = yield* register("f1")
        const two = yield* register("f2")
        yield* appendTo("f1", 1)
        yield* appendTo("f1", 1, 1)
        yield* appendTo("f2", 1, 2)
        const [stale] = (yield* claim(10, 1000)).filter((c) => c.webhookId === one.id)
        yield* TestClock.adjust(1000)
        const claimed = yield* claim(10, 1000)
        const fresh = claimed.find((c) => c.webhookId === one.id) as WebhookStore.Claim
        const other = claimed.find((c) => c.webhookId === two.id) as WebhookStore.Claim
        yield* store.record([
          { claim: stale as WebhookStore.Claim, result: result("delivered", 1000) },
          { claim: fresh, result: result("delivered", 1000) },
          {
            claim: other,
            result: result("retrying", 1000, {
              nextAttemptAt: Option.some(9000),
              step: 1,
              error: Option.some("http 500")
            })
          }
        ])
        yield* store.record([])
        const logOf = (id: string) =>
          Effect.map(store.deliveries(id, 10), (log) => log.map((d) => [d.eventId, d.attempt, d.outcome]))
        expect(yield* logOf(one.id)).toEqual([[fresh.eventId, 2, "delivered"]])
        expect(yield* logOf(two.id)).toEqual([[other.eventId, 2, "retrying"]])
        // Webhook one's next event is due; two's is held back until its retry.
        const after = yield* claim(10, 1000)
        expect(after.map((c) => c.webhookId)).toEqual([one.id])
        expect(body(after[0] as WebhookStore.Claim).data.submissions[0]?.content).toEqual({ n: "1" })
      }))

    test("delivers a webhook's events one at a time in order; a retrying event holds back the later", (store) =>
      Effect.gen(function* () {
        const slow = yield* register("f1")
        const other = yield* register("f2")
        yield* appendTo("f1", 1, 1)
        yield* appendTo("f1", 1, 2)
        yield* appendTo("f2", 1, 3)
        const claimed = yield* claim()
        expect(claimed.map((c) => c.webhookId).sort()).toEqual([slow.id, other.id].sort())
        const head = claimed.find((c) => c.webhookId === slow.id) as WebhookStore.Claim
        expect(body(head).data.submissions[0]?.content).toEqual({ n: "1" })
        yield* store.record([
          {
            claim: head,
            result: result("retrying", 0, { nextAttemptAt: Option.some(5000), step: 1, error: Option.some("http 500") })
          }
        ])
        expect((yield* claim()).filter((c) => c.webhookId === slow.id)).toEqual([])
        yield* TestClock.adjust(5000)
        const [retry] = (yield* claim()).filter((c) => c.webhookId === slow.id)
        expect(retry).toMatchObject({ eventId: head.eventId, attempt: 2, step: 1 })
        expect(retry?.failingSince).toEqual(Option.some(0))
        yield* store.record([{ claim: retry as WebhookStore.Claim, result: result("delivered", 5000) }])
        const [second] = (yield* claim()).filter((c) => c.webhookId === slow.id)
        expect(body(second as WebhookStore.Claim).data.submissions[0]?.content).toEqual({ n: "2" })
        expect(second?.failingSince).toEqual(Option.none())
        const log = yield* store.deliveries(slow.id, 10)
        expect(log.map((d) => [d.attempt, d.outcome, Option.getOrNull(d.status)])).toEqual([
          [2, "delivered", 200],
          [1, "retrying", 500]
        ])
        expect(log[1]?.nextAttemptAt).toEqual(Option.some("1970-01-01T00:00:05.000Z"))
        expect(log[1]?.error).toEqual(Option.some("http 500"))
      }))

    test("disabling gives up waiting events; redelivery sends a failed one again under its id", (store) =>
      Effect.gen(function* () {
        const webhook = yield* register("f1")
        yield* appendTo("f1", 1)
        yield* appendTo("f1", 1, 5)
        const [head] = yield* claim()
        yield* store.record([
          {
            claim: head as WebhookStore.Claim,
            result: result("failed", 0, { status: Option.some(410), disable: Option.some("gone") })
          }
        ])
        const found = yield* store.find(webhook.id)
        expect(Option.map(found, (w) => [w.enabled, w.disabledReason])).toEqual(
          Option.some([false, Option.some("gone")])
        )
        expect(yield* claim()).toEqual([])
        expect((yield* store.backlog).waiting).toBe(0)
        // Enabled again: nothing of before is sent, until the owner asks for it.
        yield* store.enable(webhook.id)
        expect(yield* claim()).toEqual([])
        expect(yield* store.redeliver(webhook.id, "msg_unknown")).toBe(false)
        const other = yield* register("f2")
        expect(yield* store.redeliver(other.id, (head as WebhookStore.Claim).eventId)).toBe(false)
        expect(yield* store.redeliver(webhook.id, (head as WebhookStore.Claim).eventId)).toBe(true)
        const [again] = yield* claim()
        expect(again).toMatchObject({ eventId: head?.eventId, body: head?.body, attempt: 2, step: 0 })
      }))

    test("a rotated secret signs beside the new one until its overlap ends", (store) =>
      Effect.gen(function* () {
        const webhook = yield* register("f1")
        expect(yield* store.rotateSecret(webhook.id, "sealed-new", 60_000)).toBe(true)
        expect(yield* store.rotateSecret("wh_unknown", "sealed-new", 60_000)).toBe(false)
        yield* appendTo("f1", 1)
        const [during] = yield* claim(10, 1000)
        expect(during?.secrets).toEqual({
          current: "sealed-new",
          previous: Option.some({ sealed: `sealed-${webhook.url}-${webhook.id}`, until: 60_000 })
        })
        yield* TestClock.adjust(60_000)
        const [after] = yield* claim(10, 1000)
        expect(after?.secrets).toEqual({ current: "sealed-new", previous: Option.none() })
      }))

    test("an erasure rewrites the file's pending and delivered events without it and announces itself", (store) =>
      Effect.gen(function* () {
        const operator = yield* OperatorStore.OperatorStore
        const live = yield* register("f1", "https://live.example/")
        const off = yield* register("f1", "https://off.example/")
        yield* store.disable(off.id, "operator")
        yield* appendTo("f1", 2)
        yield* appendTo("f1", 1, 2)
        const [first] = yield* claim()
        const original = body(first as WebhookStore.Claim)
        expect(original.data.submissions.map((submission) => submission.content.n)).toEqual(["1", "0"])
        yield* store.record([{ claim: first as WebhookStore.Claim, result: result("delivered", 0) }])

        const summary = yield* operator.eraseSubmissions(fileId("f1"), {
          _tag: "Where",
          matches: [{ name: "n", value: "1" }]
        })
        const again = yield* operator.eraseSubmissions(fileId("f1"), {
          _tag: "Where",
          matches: [{ name: "n", value: "2" }]
        })
        // The second append's event carried only n=2: it is gone. Each erasure sent its event, to the live webhook.
        const announced: Array<EventBody> = []
        for (;;) {
          const claimed = yield* claim()
          if (claimed.length === 0) break
          expect(claimed.map((c) => c.webhookId)).toEqual([live.id])
          announced.push(...claimed.map(body))
          yield* store.record(claimed.map((c) => ({ claim: c, result: result("delivered", 0) })))
        }
        expect(announced.map((event) => [event.type, event.data.ids])).toEqual([
          ["submissions.erased", summary.ids],
          ["submissions.erased", again.ids]
        ])
        expect(announced[1]?.data).toMatchObject({ fileId: "f1", SubmissionCounter: 2, VisitCounter: 5 })
        const [one, two] = announced.map((event) =>
          Number(Option.getOrThrow(ChangeCursor.decode(fileId("f1"), event.data.changesNext)))
        )
        expect(one).toBeLessThan(two as number)

        // The delivered event, sent again, no longer carries n=1; the rest of it is as it was.
        expect(yield* store.redeliver(live.id, (first as WebhookStore.Claim).eventId)).toBe(true)
        const [resent] = yield* claim()
        const rewritten = body(resent as WebhookStore.Claim)
        expect(rewritten.data.submissions).toEqual(original.data.submissions.filter((s) => s.content.n !== "1"))
        expect({ ...rewritten, data: { ...rewritten.data, submissions: [] } }).toEqual({
          ...original,
          data: { ...original.data, submissions: [] }
        })
        expect(resent?.body).not.toContain(`"n":"1"`)
      }))

    test("an erasure of more ids than one event holds sends several, and drops the events left empty", () =>
      Effect.gen(function* () {
        const operator = yield* OperatorStore.OperatorStore
        yield* register("f1")
        yield* append({
          files: [
            {
              id: "f1",
              submissions: Array.from({ length: Webhook.idsPerEvent + 1 }, (_, i) => ({
                createdDate: new Date(Date.UTC(2024, 5, 1) + i).toISOString(),
                content: { list: "spam" }
              }))
            }
          ]
        })
        const summary = yield* operator.eraseSubmissions(fileId("f1"), {
          _tag: "Where",
          matches: [{ name: "list", value: "spam" }]
        })
        expect(summary.ids.length).toBe(Webhook.idsPerEvent + 1)
        const store = yield* WebhookStore.WebhookStore
        const sent: Array<EventBody> = []
        for (;;) {
          const claimed = yield* claim()
          if (claimed.length === 0) break
          sent.push(...claimed.map(body))
          yield* store.record(claimed.map((c) => ({ claim: c, result: result("delivered", 0) })))
        }
        expect(sent.map((event) => [event.type, event.data.ids?.length])).toEqual([
          ["submissions.erased", Webhook.idsPerEvent],
          ["submissions.erased", 1]
        ])
        expect(sent.flatMap((event) => event.data.ids)).toEqual(summary.ids)
        expect(sent[1]?.data.SubmissionCounter).toBe(1)
      }))

    test("removing a webhook removes its events and log; the owner of a key is found by the key", (store) =>
      Effect.gen(function* () {
        const webhook = yield* register("f1")
        yield* appendTo("f1", 2)
        const [claimed] = yield* claim()
        yield* store.record([{ claim: claimed as WebhookStore.Claim, result: result("delivered", 0) }])
        yield* appendTo("f1", 2)
        expect(yield* store.remove(webhook.id)).toBe(true)
        expect(yield* claim()).toEqual([])
        expect(yield* store.deliveries(webhook.id, 10)).toEqual([])
        expect(yield* store.ownerOfKey(apiKey(KEY))).toEqual(Option.some("user-1"))
        expect(yield* store.ownerOfKey(apiKey("nobody's key"))).toEqual(Option.none())
      }))

    test("OperatorStore.removeUser takes a user's keys, files and webhooks with their events and log, no one else's", (store) =>
      Effect.gen(function* () {
        const operator = yield* OperatorStore.OperatorStore
        const user1 = FileData.UserId.make("user-1")
        const mine = yield* register("f1")
        const theirs = yield* register("f3")
        yield* appendTo("f1", 2)
        yield* appendTo("f3", 1)
        const claimed = (yield* claim()).find((c) => c.webhookId === mine.id) as WebhookStore.Claim
        yield* store.record([{ claim: claimed, result: result("delivered", 0) }])
        expect(yield* store.deliveries(mine.id, 10)).toHaveLength(1)

        // f1 has its one submission and the two appended, f2 its one.
        expect(yield* operator.removeUser(user1)).toEqual({ apiKeys: 1, files: 2, submissions: 4, webhooks: 1 })
        expect(yield* operator.userExists(user1)).toBe(false)
        expect(yield* store.ownerOfKey(apiKey(KEY))).toEqual(Option.none())
        expect(yield* store.find(mine.id)).toEqual(Option.none())
        expect((yield* store.listAll(Option.none())).map((webhook) => webhook.id)).toEqual([theirs.id])
        expect(yield* operator.listUsers).toEqual([{ id: "user-2", activeKeys: 1, files: 1 }])
        expect(yield* Effect.flip(operator.removeUser(user1))).toEqual(
          new OperatorStore.UserNotFound({ userId: "user-1" })
        )

        // Its ids and key are free again: the same fixture imports as new.
        const again = {
          users: fixture.users.filter((user) => user.id === "user-1"),
          files: fixture.files.filter((file) => file.userId === "user-1")
        }
        yield* operator.importFixture(yield* Effect.orDie(FixtureDocument.decode(again)))
        expect(yield* store.ownerOfKey(apiKey(KEY))).toEqual(Option.some("user-1"))
        expect(yield* store.list({ ownerId: user1, fileId: Option.none() })).toEqual([])
        const reply = yield* Effect.flatMap(FileRepository.FileRepository, (files) =>
          Stream.runCollect(FileRepository.submissions(files, fileId("f1")))
        )
        expect(reply.length).toBe(1)
      }))
  })
}
