/**
 * The behaviour every `RateLimiter` adapter must show, as one suite run unchanged against each of them: a
 * fixed window per subject that opens with the subject's first request and admits `limit` requests.
 *
 * Time passes only through `advance`: the test clock for adapters that read Effect's `Clock`, real sleeps
 * for stores that keep their own time (Redis expires keys by its clock). Windows are short so a live run
 * stays within seconds, and a live check only counts what it can be sure of: a request lies inside a window
 * when it was answered before the window could have closed, whatever the round trips took.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import { type FileData, type FileDataError, RateLimiter } from "@filedata/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"

/**
 * Builds a fresh limiter for `policy`, sharing no counts with any other limiter it built.
 *
 * @since 0.1.0
 * @category models
 */
export type MakeLimiter = (
  policy: RateLimiter.RateLimitPolicy
) => Effect.Effect<RateLimiter.RateLimiter, never, Scope.Scope>

/**
 * `test`: the adapter reads Effect's `Clock`, so the suite moves the test clock; `live`: the adapter's store
 * keeps real time, so the suite sleeps.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly clock: "test" | "live"
}

const WINDOW_MILLIS = 400

// Timers may fire a millisecond before the wall clock reaches their deadline; a store that expires by the
// wall clock must have seen the whole pause.
const LIVE_TIMER_SLACK_MILLIS = 5

/**
 * An API key subject.
 *
 * @since 0.1.0
 * @category subjects
 */
export const apiKey = (text: string): RateLimiter.RateLimitSubject => ({
  scope: "apiKey",
  apiKey: Redacted.make(text as typeof FileData.ApiKeyText.Type)
})

/**
 * A client address subject.
 *
 * @since 0.1.0
 * @category subjects
 */
export const clientAddress = (text: string): RateLimiter.RateLimitSubject => ({ scope: "clientAddress", address: text })

/**
 * The same quota for both scopes.
 *
 * @since 0.1.0
 * @category policies
 */
export const policy = (limit: number, windowMillis: number = WINDOW_MILLIS): RateLimiter.RateLimitPolicy => ({
  apiKey: { limit, windowMillis },
  clientAddress: { limit, windowMillis }
})

/**
 * Runs a check that must be refused for the rate limit, and gives the refusal.
 *
 * @since 0.1.0
 * @category assertions
 */
export const refusal = (
  check: Effect.Effect<RateLimiter.RateLimitState, FileDataError.RateLimited | FileDataError.RateLimiterUnavailable>
): Effect.Effect<FileDataError.RateLimited, FileDataError.RateLimiterUnavailable> =>
  check.pipe(
    Effect.flatMap((state) => Effect.dieMessage(`expected a refusal, admitted with ${state.remaining} remaining`)),
    Effect.catchTag("RateLimited", Effect.succeed)
  )

// A subject's current window as seen from outside: when the request that opened it was sent and answered,
// and how many requests it admitted.
interface Window {
  readonly sent: number
  readonly answered: number
  count: number
}

// One arrival: how long after the previous one it comes, and which of a few subjects sends it.
const arrivals = (minLength: number, maxLength: number) =>
  FastCheck.array(
    FastCheck.record({
      gap: FastCheck.integer({ min: 0, max: WINDOW_MILLIS / 4 }),
      subject: FastCheck.integer({ min: 0, max: 2 })
    }),
    { minLength, maxLength }
  )

/**
 * Registers the suite for one adapter.
 *
 * @since 0.1.0
 * @category suites
 */
export const suite = (name: string, makeLimiter: MakeLimiter, options: Options): void => {
  const live = options.clock === "live"
  const test = live ? it.scopedLive : it.scoped
  const advance = (millis: number): Effect.Effect<void> =>
    live ? Effect.sleep(millis + LIVE_TIMER_SLACK_MILLIS) : TestClock.adjust(millis)

  describe(`RateLimiter conformance: ${name}`, () => {
    test("admits exactly the limit, then refuses until the window closes", () =>
      Effect.gen(function* () {
        const limiter = yield* makeLimiter(policy(3))
        for (const subject of [apiKey("k"), clientAddress("10.0.0.1")]) {
          for (let i = 0; i < 3; i++) yield* limiter.consume(subject)
          const refused = yield* refusal(limiter.consume(subject))
          expect(refused).toMatchObject({ scope: subject.scope, limit: 3 })
          expect(refused.retryAfterMillis).toBeGreaterThan(0)
          expect(refused.retryAfterMillis).toBeLessThanOrEqual(WINDOW_MILLIS)
        }
      }))

    test("reports the remaining quota and the time until the window closes", () =>
      Effect.gen(function* () {
        const limiter = yield* makeLimiter({
          apiKey: { limit: 3, windowMillis: WINDOW_MILLIS },
          clientAddress: { limit: 5, windowMillis: 2 * WINDOW_MILLIS }
        })
        const first = yield* limiter.consume(apiKey("k"))
        expect(first).toMatchObject({ scope: "apiKey", limit: 3, windowMillis: WINDOW_MILLIS, remaining: 2 })
        expect(first.resetMillis).toBeGreaterThan(0)
        expect(first.resetMillis).toBeLessThanOrEqual(WINDOW_MILLIS)
        yield* advance(100)
        const second = yield* limiter.consume(apiKey("k"))
        expect(second.remaining).toBe(1)
        expect(second.resetMillis).toBeGreaterThan(0)
        expect(second.resetMillis).toBeLessThanOrEqual(WINDOW_MILLIS - 100)
        const third = yield* limiter.consume(apiKey("k"))
        expect(third.remaining).toBe(0)
        expect(third.resetMillis).toBeLessThanOrEqual(second.resetMillis)
        expect((yield* refusal(limiter.consume(apiKey("k")))).retryAfterMillis).toBeLessThanOrEqual(third.resetMillis)
        expect(yield* limiter.consume(clientAddress("10.0.0.1"))).toMatchObject({
          scope: "clientAddress",
          limit: 5,
          windowMillis: 2 * WINDOW_MILLIS,
          remaining: 4
        })
      }))

    test("the request that opens a window reports the whole window, alone and counted with its request", () =>
      Effect.gen(function* () {
        const limiter = yield* makeLimiter({
          apiKey: { limit: 2, windowMillis: WINDOW_MILLIS },
          clientAddress: { limit: 5, windowMillis: 2 * WINDOW_MILLIS }
        })
        expect(yield* limiter.consume(apiKey("k"))).toMatchObject({ remaining: 1, resetMillis: WINDOW_MILLIS })
        const consumeRequest =
          limiter.consumeRequest ??
          ((address: string, apiKey: FileData.ApiKey) =>
            RateLimiter.consumeRequestInTurn(limiter.consume, address, apiKey))
        const request = yield* consumeRequest("10.0.0.1", Redacted.make("l" as typeof FileData.ApiKeyText.Type))
        expect(request.clientAddress).toEqual(
          Either.right({
            scope: "clientAddress",
            limit: 5,
            windowMillis: 2 * WINDOW_MILLIS,
            remaining: 4,
            resetMillis: 2 * WINDOW_MILLIS
          })
        )
        expect(request.apiKey).toEqual(
          Either.right({
            scope: "apiKey",
            limit: 2,
            windowMillis: WINDOW_MILLIS,
            remaining: 1,
            resetMillis: WINDOW_MILLIS
          })
        )
        yield* limiter.consume(apiKey("k"))
        const refused = yield* refusal(limiter.consume(apiKey("k")))
        yield* advance(refused.retryAfterMillis)
        // The next window, opened after the last one closed.
        expect(yield* limiter.consume(apiKey("k"))).toMatchObject({ remaining: 1, resetMillis: WINDOW_MILLIS })
      }))

    test("refused requests do not extend the window, and a new window admits again", () =>
      Effect.gen(function* () {
        const limiter = yield* makeLimiter(policy(2))
        yield* limiter.consume(apiKey("k"))
        yield* limiter.consume(apiKey("k"))
        yield* advance(WINDOW_MILLIS / 4)
        yield* refusal(limiter.consume(apiKey("k")))
        yield* advance(WINDOW_MILLIS / 4)
        const refused = yield* refusal(limiter.consume(apiKey("k")))
        expect(refused.retryAfterMillis).toBeLessThanOrEqual(WINDOW_MILLIS / 2)
        yield* advance(refused.retryAfterMillis)
        expect(yield* limiter.consume(apiKey("k"))).toMatchObject({ remaining: 1 })
        yield* limiter.consume(apiKey("k"))
        yield* refusal(limiter.consume(apiKey("k")))
      }))

    test("counts each subject on its own, keys apart from addresses with the same text", () =>
      Effect.gen(function* () {
        const limiter = yield* makeLimiter({
          apiKey: { limit: 1, windowMillis: WINDOW_MILLIS },
          clientAddress: { limit: 2, windowMillis: WINDOW_MILLIS }
        })
        yield* limiter.consume(apiKey("same-text"))
        yield* limiter.consume(clientAddress("same-text"))
        yield* limiter.consume(clientAddress("same-text"))
        yield* limiter.consume(apiKey("other"))
        yield* limiter.consume(clientAddress("other"))
        expect(yield* refusal(limiter.consume(apiKey("same-text")))).toMatchObject({ scope: "apiKey", limit: 1 })
        expect(yield* refusal(limiter.consume(apiKey("other")))).toMatchObject({ scope: "apiKey", limit: 1 })
        expect(yield* refusal(limiter.consume(clientAddress("same-text")))).toMatchObject({
          scope: "clientAddress",
          limit: 2
        })
      }))

    // The property below builds a limiter per run and relies on each starting empty.
    test("every limiter the suite builds starts with no counts", () =>
      Effect.gen(function* () {
        const first = yield* makeLimiter(policy(1))
        const second = yield* makeLimiter(policy(1))
        yield* first.consume(apiKey("k"))
        yield* second.consume(apiKey("k"))
      }))

    test("counts 60 KiB keys like short ones, and tells apart keys that differ in their last character", () =>
      Effect.gen(function* () {
        const limiter = yield* makeLimiter(policy(1))
        const long = "k".repeat(60 * 1024)
        yield* limiter.consume(apiKey(long))
        yield* refusal(limiter.consume(apiKey(long)))
        yield* limiter.consume(apiKey(`${long.slice(0, -1)}j`))
        yield* limiter.consume(clientAddress(long))
      }))

    test.prop(
      "counts a request in one step (`consumeRequest`, where it has it) exactly as its two counts in turn",
      {
        requests: FastCheck.array(
          FastCheck.record({ address: FastCheck.constantFrom("a", "b"), key: FastCheck.constantFrom("k", "l", "m") }),
          { minLength: 1, maxLength: 12 }
        )
      },
      ({ requests }) =>
        Effect.scoped(
          Effect.gen(function* () {
            // Windows that outlast the run, so both limiters see the same counts.
            const quotas = {
              apiKey: { limit: 2, windowMillis: 100 * WINDOW_MILLIS },
              clientAddress: { limit: 3, windowMillis: 100 * WINDOW_MILLIS }
            }
            const inOneStep = yield* makeLimiter(quotas)
            const inTurn = yield* makeLimiter(quotas)
            // What a count says, the times aside (each store's clock moves on between the two).
            const said = (answer: Either.Either<RateLimiter.RateLimitState, FileDataError.RateLimited> | undefined) =>
              answer === undefined
                ? "not counted"
                : Either.isRight(answer)
                  ? `${answer.right.scope} admitted, ${answer.right.remaining} of ${answer.right.limit} left`
                  : `${answer.left.scope} refused at ${answer.left.limit}`
            for (const { address, key } of requests) {
              const apiKeyOf = Redacted.make(key as typeof FileData.ApiKeyText.Type)
              const one = yield* (
                inOneStep.consumeRequest ??
                ((address: string, apiKey: FileData.ApiKey) =>
                  RateLimiter.consumeRequestInTurn(inOneStep.consume, address, apiKey))
              )(address, apiKeyOf)
              const two = yield* RateLimiter.consumeRequestInTurn(inTurn.consume, address, apiKeyOf)
              expect([said(one.clientAddress), said(one.apiKey)]).toEqual([said(two.clientAddress), said(two.apiKey)])
            }
          }).pipe(Effect.catchTag("RateLimiterUnavailable", Effect.die))
        ),
      { fastCheck: { numRuns: live ? 10 : 50 } }
    )

    test("admits exactly the limit from concurrent requests", () =>
      Effect.gen(function* () {
        const limiter = yield* makeLimiter(policy(10, 10 * WINDOW_MILLIS))
        const results = yield* Effect.all(
          Array.from({ length: 50 }, () => Effect.either(limiter.consume(apiKey("k")))),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Either.isRight)).toHaveLength(10)
        expect(results.filter(Either.isLeft).map((result) => result.left._tag)).toEqual(Array(40).fill("RateLimited"))
      }))

    test.prop(
      "admits and refuses as a fixed window per subject that opens with the subject's first admitted request",
      { arrivals: live ? arrivals(8, 20) : arrivals(0, 60), limit: FastCheck.integer({ min: 1, max: 4 }) },
      ({ arrivals, limit }) =>
        Effect.scoped(
          Effect.gen(function* () {
            const limiter = yield* makeLimiter(policy(limit))
            const windows = new Map<number, Window>()
            const undecidable = new Set<number>()
            for (const { gap, subject } of arrivals) {
              yield* advance(gap)
              const sent = yield* Clock.currentTimeMillis
              const result = yield* Effect.either(
                limiter.consume(apiKey(`key-${subject}`)).pipe(Effect.catchTag("RateLimiterUnavailable", Effect.die))
              )
              const answered = yield* Clock.currentTimeMillis
              if (undecidable.has(subject)) continue
              const window = windows.get(subject)
              if (window === undefined || sent >= window.answered + WINDOW_MILLIS) {
                // Certainly after the window closed: this request opens the next one.
                expect(Either.isRight(result)).toBe(true)
                windows.set(subject, { sent, answered, count: 1 })
                continue
              }
              if (answered >= window.sent + WINDOW_MILLIS) {
                // Within a round trip of the window's end: which window counted it cannot be told from here.
                undecidable.add(subject)
                continue
              }
              // Certainly inside the window: the store saw it between `sent` and `answered`, and the window
              // closes between `window.sent + WINDOW_MILLIS` and `window.answered + WINDOW_MILLIS`.
              const earliestClose = window.sent + WINDOW_MILLIS - answered
              const latestClose = window.answered + WINDOW_MILLIS - sent
              if (window.count < limit) {
                expect(Either.isRight(result)).toBe(true)
                window.count++
                if (Either.isRight(result)) {
                  expect(result.right.remaining).toBe(limit - window.count)
                  expect(result.right.resetMillis).toBeGreaterThanOrEqual(earliestClose)
                  expect(result.right.resetMillis).toBeLessThanOrEqual(latestClose)
                }
              } else {
                expect(Either.isLeft(result)).toBe(true)
                if (Either.isLeft(result)) {
                  expect(result.left.limit).toBe(limit)
                  expect(result.left.retryAfterMillis).toBeGreaterThanOrEqual(earliestClose)
                  expect(result.left.retryAfterMillis).toBeLessThanOrEqual(latestClose)
                }
              }
            }
          })
        ),
      { timeout: 60_000, fastCheck: { numRuns: live ? 6 : 50 } }
    )
  })
}
