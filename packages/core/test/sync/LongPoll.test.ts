// `wait` on the incremental read, on test layers of the ports and the test clock: a waiting request answers with
// what is appended to its file, never for another file's append, the empty page with `next` unchanged when its
// time is up, at once when the process stops or the client goes; it counts once against the rate limits and
// against the bounds of `WaitingRequests` while it waits. And `SubmissionSignals.polled` wakes exactly the
// waiters of the files that changed.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { ApiKeyText, type FileId } from "../../src/shared/FileData.js"
import * as FileRepository from "../../src/shared/FileRepository.js"
import * as GetSubmissions from "../../src/sync/GetSubmissions.js"
import * as SubmissionSignals from "../../src/sync/SubmissionSignals.js"
import * as SubmissionsReply from "../../src/sync/SubmissionsReply.js"
import * as WaitingRequests from "../../src/sync/WaitingRequests.js"
import * as Journal from "../utils/Journal.js"
import { ADDRESS, input } from "../utils/Requests.js"
import * as TestFileRepository from "../utils/TestFileRepository.js"
import * as TestRateLimiter from "../utils/TestRateLimiter.js"

const spec: TestFileRepository.RepositorySpec = {
  users: [{ id: "alice", apiKeys: ["alice-key", "other-key"] }],
  files: [
    {
      id: "contact",
      ownerId: "alice",
      submissions: [{ createdDate: "2024-01-01T00:00:00.000Z", content: { n: "c0" } }]
    },
    { id: "poll", ownerId: "alice" }
  ]
}

const later = (n: string) => [{ createdDate: "2024-02-01T00:00:00.000Z", content: { n } }]

interface Setup {
  readonly repository: TestFileRepository.TestFileRepository
  readonly limiter: TestRateLimiter.TestRateLimiter
  readonly waiting: WaitingRequests.WaitingRequests
  readonly journal: Journal.Journal
}

const setup = (limits?: WaitingRequests.Limits) =>
  Effect.map(WaitingRequests.make(limits), (waiting): Setup => {
    const journal = Journal.make()
    return {
      repository: TestFileRepository.make(spec),
      limiter: TestRateLimiter.make({}, journal),
      waiting,
      journal
    }
  })

// One request, on the set-up's ports; its reply as the contract writes it.
const ask = (
  { limiter, repository, waiting }: Setup,
  body: Record<string, unknown>,
  options: { readonly clientAddress?: string; readonly gone?: (listener: () => void) => () => void } = {}
) =>
  Effect.flatMap(SubmissionSignals.SubmissionSignals, (signals) =>
    Effect.flatMap(
      GetSubmissions.runWith(
        { files: repository.repository, limiter: limiter.limiter, signals, waiting },
        { ...input(body, [], options.clientAddress ?? ADDRESS), gone: options.gone }
      ),
      SubmissionsReply.toSubmissionsPage
    )
  )

// The cursor at the end of what `contact` holds now.
const cursorAtEnd = (s: Setup) => Effect.map(ask(s, { fileId: "contact", apiKey: "alice-key" }), (page) => page.next)

const contents = (page: SubmissionsReply.SubmissionsPage) => page.submissions.map((s) => s.content.n)

const withSignals = <A, E>(s: Setup, effect: Effect.Effect<A, E, SubmissionSignals.SubmissionSignals>) =>
  Effect.provide(effect, s.repository.signals)

describe("GetSubmissions with wait", () => {
  it.effect("answers with the submission appended while it waits, read once more and counted once", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* withSignals(
        s,
        Effect.gen(function* () {
          const after = yield* cursorAtEnd(s)
          const consumed = s.journal.length
          const waiter = yield* Effect.fork(ask(s, { fileId: "contact", apiKey: "alice-key", after, wait: 30 }))
          yield* TestClock.adjust("1 second")
          expect(Option.isNone(yield* Fiber.poll(waiter))).toBe(true)
          expect(s.waiting.size()).toBe(1)
          s.repository.append("contact", later("c1"))
          yield* TestClock.adjust(SubmissionSignals.defaultIntervalMillis)
          const page = yield* Fiber.join(waiter)
          expect(contents(page)).toEqual(["c1"])
          expect(page.next).not.toBe(after)
          // One request: the address and the key, each counted once however long it waited.
          expect(s.journal.slice(consumed)).toEqual(["consume clientAddress 203.0.113.7", "consume apiKey alice-key"])
          expect(s.waiting.size()).toBe(0)
        })
      )
    })
  )

  it.effect("is not answered by another file's append, and gives the empty page with next unchanged at its end", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* withSignals(
        s,
        Effect.gen(function* () {
          const after = yield* cursorAtEnd(s)
          const waiter = yield* Effect.fork(ask(s, { fileId: "contact", apiKey: "alice-key", after, wait: 5 }))
          yield* TestClock.adjust("1 second")
          s.repository.append("poll", later("p1"))
          yield* TestClock.adjust("1 second")
          expect(Option.isNone(yield* Fiber.poll(waiter))).toBe(true)
          yield* TestClock.adjust("3 seconds")
          expect(yield* Fiber.join(waiter)).toEqual({ submissions: [], next: after, hasMore: false })
        })
      )
    })
  )

  it.effect("answers at once when something matches already, and waits for nothing with wait 0", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* withSignals(
        s,
        Effect.gen(function* () {
          expect(contents(yield* ask(s, { fileId: "contact", apiKey: "alice-key", wait: 30 }))).toEqual(["c0"])
          const after = yield* cursorAtEnd(s)
          expect(yield* ask(s, { fileId: "contact", apiKey: "alice-key", after, wait: 0 })).toEqual({
            submissions: [],
            next: after,
            hasMore: false
          })
        })
      )
    })
  )

  it.effect("ends with the empty page at once when the process stops or the client goes away", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* withSignals(
        s,
        Effect.gen(function* () {
          const after = yield* cursorAtEnd(s)
          // The client going away, as a transport tells it.
          let leave = () => {}
          const gone = (listener: () => void) => {
            leave = listener
            return () => {
              leave = () => {}
            }
          }
          const left = yield* Effect.fork(ask(s, { fileId: "contact", apiKey: "alice-key", after, wait: 30 }, { gone }))
          const stays = yield* Effect.fork(ask(s, { fileId: "poll", apiKey: "alice-key", wait: 30 }))
          yield* TestClock.adjust("1 second")
          expect(s.waiting.size()).toBe(2)
          leave()
          expect(yield* Fiber.join(left)).toEqual({ submissions: [], next: after, hasMore: false })
          expect(Option.isNone(yield* Fiber.poll(stays))).toBe(true)
          yield* s.waiting.stop
          expect((yield* Fiber.join(stays)).submissions).toEqual([])
          // Once stopped, a new request waits no more.
          expect((yield* ask(s, { fileId: "poll", apiKey: "alice-key", wait: 30 })).submissions).toEqual([])
          expect(s.waiting.size()).toBe(0)
        })
      )
    })
  )

  it.effect("refuses a request over its key's or its address's bound with RateLimited, only while it would wait", () =>
    Effect.gen(function* () {
      const s = yield* setup({ perKey: 1, perAddress: 2 })
      yield* withSignals(
        s,
        Effect.gen(function* () {
          const first = yield* Effect.fork(ask(s, { fileId: "poll", apiKey: "alice-key", wait: 30 }))
          yield* TestClock.adjust("1 second")
          expect(yield* Effect.flip(ask(s, { fileId: "poll", apiKey: "alice-key", wait: 30 }))).toMatchObject({
            _tag: "RateLimited",
            scope: "apiKey",
            limit: 1
          })
          // A reply that holds a submission never waits, so it is not bounded.
          expect(contents(yield* ask(s, { fileId: "contact", apiKey: "alice-key", wait: 30 }))).toEqual(["c0"])
          const second = yield* Effect.fork(ask(s, { fileId: "poll", apiKey: "other-key", wait: 30 }))
          yield* TestClock.adjust("1 second")
          expect(yield* Effect.flip(ask(s, { fileId: "poll", apiKey: "other-key", wait: 30 }))).toMatchObject({
            _tag: "RateLimited",
            scope: "apiKey"
          })
          s.repository.append("poll", later("p1"))
          yield* TestClock.adjust(SubmissionSignals.defaultIntervalMillis)
          expect(contents(yield* Fiber.join(first))).toEqual(["p1"])
          expect(contents(yield* Fiber.join(second))).toEqual(["p1"])
          expect(s.waiting.size()).toBe(0)
        })
      )
    })
  )

  it.effect("the address bound counts every key of the address", () =>
    Effect.gen(function* () {
      const s = yield* setup({ perKey: 5, perAddress: 1 })
      yield* withSignals(
        s,
        Effect.gen(function* () {
          const first = yield* Effect.fork(ask(s, { fileId: "poll", apiKey: "alice-key", wait: 2 }))
          yield* TestClock.adjust("1 second")
          expect(yield* Effect.flip(ask(s, { fileId: "poll", apiKey: "other-key", wait: 2 }))).toMatchObject({
            _tag: "RateLimited",
            scope: "clientAddress",
            limit: 1,
            retryAfterMillis: WaitingRequests.retryAfterMillis
          })
          yield* TestClock.adjust("1 second")
          expect((yield* Fiber.join(first)).submissions).toEqual([])
          expect(s.waiting.size()).toBe(0)
        })
      )
    })
  )

  it.effect("refuses a wait out of 0 to 30 on /wait", () =>
    Effect.gen(function* () {
      for (const wait of [-1, 31, 1.5, "5"]) {
        const error = yield* Effect.flip(GetSubmissions.parseRequest({ fileId: "f", apiKey: "k", wait }))
        expect(error).toMatchObject({
          _tag: "InvalidRequest",
          issues: [{ pointer: "/wait", detail: "must be an integer from 0 to 30" }]
        })
      }
      expect(yield* GetSubmissions.parseRequest({ fileId: "f", apiKey: "k" })).toMatchObject({ wait: 0 })
    })
  )
})

describe("SubmissionSignals.polled", () => {
  const files = ["a", "b", "c", "d"] as const

  it.effect.prop(
    "one tick wakes exactly the waiters of the files appended to, and a waiter behind the poll at once",
    {
      waiters: FastCheck.array(FastCheck.constantFrom(...files), { minLength: 1, maxLength: 12 }),
      appended: FastCheck.uniqueArray(FastCheck.constantFrom(...files), { maxLength: 4 })
    },
    ({ appended, waiters }) =>
      Effect.scoped(
        Effect.gen(function* () {
          const repository = TestFileRepository.make({
            users: [],
            files: files.map((id) => ({ id, ownerId: "u" }))
          })
          let queries = 0
          const signals = yield* SubmissionSignals.polled({
            changesAfter: (position) =>
              Effect.zipRight(
                Effect.sync(() => queries++),
                repository.changesAfter(position)
              ),
            position: Number,
            intervalMillis: 250
          })
          const readPoint = FileRepository.ReadPoint("0")
          const fibers = yield* Effect.forEach(waiters, (file) =>
            Effect.fork(signals.changed(file as FileId, readPoint, { timeoutMillis: 60_000 }))
          )
          yield* TestClock.adjust(250)
          expect(signals.waiting()).toBe(waiters.length)
          for (const file of appended) repository.append(file, later(file))
          yield* TestClock.adjust(250)
          // One query a tick, whatever the number of waiters.
          expect(queries).toBe(2)
          for (const [i, file] of waiters.entries()) {
            const woke = Option.isSome(yield* Fiber.poll(fibers[i] as Fiber.RuntimeFiber<boolean>))
            expect(woke).toBe((appended as ReadonlyArray<string>).includes(file))
          }
          expect(signals.waiting()).toBe(waiters.filter((file) => !appended.includes(file)).length)
          // A read point from before what the poll has looked at may have missed its commit: it wakes at once.
          if (appended.length > 0) {
            const behind = yield* Effect.fork(signals.changed("a" as FileId, readPoint, { timeoutMillis: 60_000 }))
            yield* Effect.yieldNow()
            expect(yield* Fiber.poll(behind)).toEqual(Option.some(Exit.succeed(true)))
          }
          yield* Effect.forEach(fibers, Fiber.interrupt)
          expect(signals.waiting()).toBe(0)
        })
      ),
    { fastCheck: { numRuns: 50 } }
  )

  it.effect("says false once the wait's time is up or its end comes, and forgets the waiter", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const repository = TestFileRepository.make({ users: [], files: [{ id: "a", ownerId: "u" }] })
        const signals = yield* SubmissionSignals.polled({
          changesAfter: repository.changesAfter,
          position: Number,
          intervalMillis: 250
        })
        const readPoint = FileRepository.ReadPoint("0")
        const timed = yield* Effect.fork(signals.changed("a" as FileId, readPoint, { timeoutMillis: 1000 }))
        const ending = new SubmissionSignals.WaitEnd()
        const aborted = yield* Effect.fork(
          signals.changed("a" as FileId, readPoint, { timeoutMillis: 60_000, end: ending })
        )
        yield* TestClock.adjust(750)
        expect(Option.isNone(yield* Fiber.poll(timed))).toBe(true)
        ending.end()
        expect(yield* Fiber.join(aborted)).toBe(false)
        yield* TestClock.adjust(250)
        expect(yield* Fiber.join(timed)).toBe(false)
        expect(signals.waiting()).toBe(0)
      })
    )
  )

  it.effect("asks storage nothing while no request waits", () =>
    Effect.scoped(
      Effect.gen(function* () {
        let queries = 0
        yield* SubmissionSignals.polled({
          changesAfter: () => Effect.sync(() => ({ files: [], top: queries++ })),
          position: Number,
          intervalMillis: 250
        })
        yield* TestClock.adjust("10 seconds")
        expect(queries).toBe(0)
      })
    )
  )

  it.effect("with a probe, queries when it sees a commit, a waiter arrives or the interval passes, never else", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const repository = TestFileRepository.make({ users: [], files: [{ id: "a", ownerId: "u" }] })
        let queries = 0
        let probes = 0
        let committed = false
        const signals = yield* SubmissionSignals.polled({
          changesAfter: (position) =>
            Effect.zipRight(
              Effect.sync(() => queries++),
              repository.changesAfter(position)
            ),
          position: Number,
          intervalMillis: 250,
          probe: {
            changed: Effect.sync(() => {
              probes++
              const seen = committed
              committed = false
              return seen
            }),
            everyMillis: 25
          }
        })
        // Nobody waits: no probe and no query.
        yield* TestClock.adjust(1000)
        expect([probes, queries]).toEqual([0, 0])
        const waiting = yield* Effect.fork(
          signals.changed("a" as FileId, FileRepository.ReadPoint("0"), { timeoutMillis: 60_000 })
        )
        // The waiter's arrival: one query, since the probe cannot tell of a commit made before it came.
        yield* TestClock.adjust(25)
        expect([probes, queries]).toEqual([1, 1])
        yield* TestClock.adjust(100)
        expect([probes, queries]).toEqual([5, 1])
        // Another process appends: the next probe sees it, and its query wakes the waiter.
        repository.append("a", later("a1"))
        committed = true
        yield* TestClock.adjust(25)
        expect([probes, queries]).toEqual([6, 2])
        expect(yield* Fiber.join(waiting)).toBe(true)
        // A commit the probe misses is found by the query at the interval.
        const missed = yield* Effect.fork(
          signals.changed("a" as FileId, FileRepository.ReadPoint("1"), { timeoutMillis: 60_000 })
        )
        yield* TestClock.adjust(25)
        expect(queries).toBe(3)
        repository.append("a", later("a2"))
        yield* TestClock.adjust(200)
        expect(Option.isNone(yield* Fiber.poll(missed))).toBe(true)
        yield* TestClock.adjust(50)
        expect(queries).toBe(4)
        expect(yield* Fiber.join(missed)).toBe(true)
      })
    )
  )

  it.effect("committed ends at a poke, or at a commit the probe sees while requests wait; alone it costs no tick", () =>
    Effect.scoped(
      Effect.gen(function* () {
        let probes = 0
        let committed = false
        const signals = yield* SubmissionSignals.polled({
          changesAfter: () => Effect.succeed({ files: [], top: undefined }),
          position: Number,
          intervalMillis: 250,
          probe: {
            changed: Effect.sync(() => {
              probes++
              const seen = committed
              committed = false
              return seen
            }),
            everyMillis: 25
          }
        })
        const poked = yield* Effect.fork(signals.committed)
        yield* TestClock.adjust(1000)
        expect(Option.isNone(yield* Fiber.poll(poked))).toBe(true)
        expect(probes).toBe(0)
        yield* signals.poke
        yield* Fiber.join(poked)
        // A request waits: the probe runs, and a commit it sees ends `committed` too.
        const request = yield* Effect.fork(
          signals.changed("a" as FileId, FileRepository.ReadPoint("0"), { timeoutMillis: 60_000 })
        )
        const probed = yield* Effect.fork(signals.committed)
        yield* TestClock.adjust(100)
        expect(Option.isNone(yield* Fiber.poll(probed))).toBe(true)
        committed = true
        yield* TestClock.adjust(25)
        yield* Fiber.join(probed)
        yield* Fiber.interrupt(request)
        const forgotten = yield* Effect.fork(signals.committed)
        yield* TestClock.adjust(25)
        expect(signals.waiting()).toBe(1)
        yield* Fiber.interrupt(forgotten)
        expect(signals.waiting()).toBe(0)
      })
    )
  )
})

describe("SubmissionSignals.WaitEnd", () => {
  it("calls its listener once at the end, at once when it has ended, and never once removed", () => {
    const calls: Array<string> = []
    const end = new SubmissionSignals.WaitEnd()
    const removed = end.listen(() => calls.push("removed"))
    removed()
    end.listen(() => calls.push("first"))
    // One listener at a time: the later one replaces the earlier.
    end.listen(() => calls.push("second"))
    expect(end.ended).toBe(false)
    end.end()
    end.end()
    expect(end.ended).toBe(true)
    end.listen(() => calls.push("late"))
    expect(calls).toEqual(["second", "late"])
  })
})

describe("WaitingRequests.hold", () => {
  it.effect("counts a request until it is given back, once however often, and ends the waits on stop", () =>
    Effect.gen(function* () {
      const waiting = yield* WaitingRequests.make({ perKey: 1, perAddress: 5 })
      const apiKey = Redacted.make(ApiKeyText.make("key-a"))
      const first = new SubmissionSignals.WaitEnd()
      const release = yield* waiting.hold(apiKey, ADDRESS, first)
      expect(waiting.size()).toBe(1)
      const refused = yield* Effect.flip(waiting.hold(apiKey, ADDRESS, new SubmissionSignals.WaitEnd()))
      expect(refused).toMatchObject({ _tag: "RateLimited", scope: "apiKey", limit: 1 })
      release()
      release()
      expect(waiting.size()).toBe(0)
      const second = new SubmissionSignals.WaitEnd()
      yield* waiting.hold(apiKey, ADDRESS, second)
      yield* waiting.stop
      expect([first.ended, second.ended]).toEqual([false, true])
      // After the stop, a wait is ended as it is counted.
      const late = new SubmissionSignals.WaitEnd()
      yield* waiting.hold(Redacted.make(ApiKeyText.make("key-b")), ADDRESS, late)
      expect(late.ended).toBe(true)
    })
  )
})
