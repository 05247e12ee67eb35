// Two instances on one PostgreSQL, as two pools of their own claiming at once: each event is leased to one of
// them (FOR UPDATE SKIP LOCKED), and never two events of one webhook at a time.

import { describe, expect, it } from "@effect/vitest"
import { FileData, OperatorStore, WebhookStore } from "@filedata/core"
import { AppendDocument } from "@filedata/fixture"
import { PgStorage } from "@filedata/postgres"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { importDocument, tempSchema, testDatabaseUrl, urlForSchema } from "./utils.js"

const WEBHOOKS = 8
const APPENDS = 6

describe.skipIf(testDatabaseUrl === undefined)("PostgreSQL (TEST_DATABASE_URL)", () => {
  it.scoped(
    "two instances claiming at once lease each event once, one per webhook at a time",
    () =>
      Effect.gen(function* () {
        const schema = yield* tempSchema
        const instance = () => PgStorage.layer({ url: urlForSchema(schema), poolMax: 3 })
        // Built in the test's scope, so both pools stay open until it ends.
        const firstContext = yield* Layer.build(instance())
        const first = Context.get(firstContext, WebhookStore.WebhookStore)
        const second = Context.get(yield* Layer.build(instance()), WebhookStore.WebhookStore)
        const webhookIds = yield* Effect.gen(function* () {
          yield* importDocument({
            users: [{ id: "u", apiKeys: ["k"] }],
            files: [{ id: "f", userId: "u", name: "F", creationDate: "2024-01-01T00:00:00.000Z" }]
          })
          const ids = yield* Effect.forEach(Array.from({ length: WEBHOOKS }), (_, i) =>
            Effect.map(
              first.create({
                fileId: FileData.FileId.make("f"),
                url: `https://w${i}.example/`,
                sealSecret: () => Effect.succeed("s")
              }),
              (webhook) => webhook.id
            )
          )
          const store = yield* OperatorStore.OperatorStore
          for (let n = 0; n < APPENDS; n++) {
            const append = yield* Effect.orDie(
              AppendDocument.decode({
                files: [{ id: "f", submissions: [{ createdDate: "2024-02-01T00:00:00.000Z", content: { n: `${n}` } }] }]
              })
            )
            yield* store.appendSubmissions(append)
          }
          return ids
        }).pipe(Effect.provide(firstContext))

        const seen = new Map<string, number>()
        const rounds: Array<ReadonlyArray<WebhookStore.Claim>> = []
        // Each instance claims and records, over and over, until nothing is left; both at once.
        const work = (store: WebhookStore.WebhookStore) =>
          Effect.gen(function* () {
            for (;;) {
              const claims = yield* store.claim({ limit: 3, leaseMillis: 60_000 })
              if (claims.length === 0 && (yield* store.backlog).waiting === 0) return
              rounds.push(claims)
              for (const claim of claims) seen.set(claim.eventId, (seen.get(claim.eventId) ?? 0) + 1)
              yield* store.record(
                claims.map((claim) => ({
                  claim,
                  result: {
                    at: 0,
                    status: Option.some(200),
                    outcome: "delivered" as const,
                    error: Option.none(),
                    durationMillis: 1,
                    nextAttemptAt: Option.none(),
                    step: 0,
                    disable: Option.none()
                  }
                }))
              )
            }
          })
        yield* Effect.all([work(first), work(second)], { concurrency: 2 })
        expect(seen.size).toBe(WEBHOOKS * APPENDS)
        expect([...seen.values()].every((times) => times === 1)).toBe(true)
        for (const claims of rounds) {
          expect(new Set(claims.map((claim) => claim.webhookId)).size).toBe(claims.length)
        }
        // Each webhook's log holds its events in event order.
        for (const id of webhookIds) {
          const log = yield* first.deliveries(id, 100)
          expect(log).toHaveLength(APPENDS)
        }
      }),
    60_000
  )
})
