import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as ChangeCursor from "../../src/changes/ChangeCursor.js"
import * as ChangesEncoder from "../../src/changes/ChangesEncoder.js"
import * as ChangesReply from "../../src/changes/ChangesReply.js"
import * as GetChanges from "../../src/changes/GetChanges.js"
import { type FileId, timestampFromEpochMillis } from "../../src/shared/FileData.js"
import { AccessDenied, FileNotFound, InvalidRequest, Issue } from "../../src/shared/FileDataError.js"
import * as SubmissionCursor from "../../src/sync/SubmissionCursor.js"
import * as SubmissionSignals from "../../src/sync/SubmissionSignals.js"
import * as WaitingRequests from "../../src/sync/WaitingRequests.js"
import * as Journal from "../utils/Journal.js"
import { ADDRESS, input } from "../utils/Requests.js"
import * as TestFileRepository from "../utils/TestFileRepository.js"
import * as TestRateLimiter from "../utils/TestRateLimiter.js"

const JAN_1 = Date.UTC(2024, 0, 1)
const at = (millis: number) => timestampFromEpochMillis(millis)

const dated = (count: number, tag: string, from = JAN_1) =>
  Array.from({ length: count }, (_, i) => ({ createdDate: at(from + i * 1000), content: { n: `${tag}${i}` } }))

const spec: TestFileRepository.RepositorySpec = {
  users: [
    { id: "alice", apiKeys: ["alice-key"] },
    { id: "bob", apiKeys: ["bob-key"] }
  ],
  files: [
    { id: "contact", ownerId: "alice", submissions: dated(5, "c") },
    { id: "poll", ownerId: "alice", submissions: dated(3, "p") },
    { id: "survey", ownerId: "bob", submissions: dated(2, "s") },
    { id: "empty", ownerId: "alice" }
  ]
}

const run = (
  request: GetChanges.GetChangesInput,
  repository: TestFileRepository.TestFileRepository,
  limiter: TestRateLimiter.TestRateLimiter = TestRateLimiter.make()
) => GetChanges.run(request).pipe(Effect.provide(Layer.mergeAll(repository.layer, limiter.layer, repository.signals)))

/** The reply of a request as the contract writes it: the encoder's text, parsed, and checked against the value. */
const ask = (body: Record<string, unknown>, repository: TestFileRepository.TestFileRepository) =>
  Effect.gen(function* () {
    const text = Chunk.join(
      yield* Stream.runCollect(ChangesEncoder.encode(yield* run(input(body, []), repository))),
      ""
    )
    const page = JSON.parse(text) as ChangesReply.ChangesPage
    expect(yield* ChangesReply.toChangesPage(yield* run(input(body, []), repository))).toEqual(page)
    return page
  })

// What a change names: its type's last word and the submission's content `n`, or its id when erased.
const told = (page: ChangesReply.ChangesPage) =>
  page.changes.map((change) =>
    change.type === "submission.created" ? `created ${change.content.n}` : `erased ${change.id}`
  )

const cursorOf = (fileId: string, position: string) => ChangeCursor.encode(fileId as FileId, position)

describe("getChanges: access", () => {
  it.effect("gives the owner the file's changes after the same checks in the same order as the other reads", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const repository = TestFileRepository.make(spec, journal)
      const reply = yield* run(
        input({ fileId: "contact", apiKey: "alice-key" }, journal),
        repository,
        TestRateLimiter.make({}, journal)
      )
      expect(journal).toEqual([
        `consume clientAddress ${ADDRESS}`,
        "body",
        "consume apiKey alice-key",
        "findAccess alice-key contact"
      ])
      const page = yield* ChangesReply.toChangesPage(reply)
      expect(journal.at(-1)).toBe("changes contact")
      const ids = repository.ids("contact")
      expect(page.changes).toEqual(
        repository.submissions("contact").map((row, i) => ({
          type: "submission.created",
          id: ids[i],
          createdDate: row.createdDate,
          content: JSON.parse(row.contentJson)
        }))
      )
      expect(page.hasMore).toBe(false)
    })
  )

  it.effect("fails as GetFileData does: unknown key before the file, no file, another's file", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make(spec)
      const failure = (body: unknown) => Effect.flip(run(input(body, []), repository))
      expect(yield* failure({ fileId: "contact", apiKey: "guess" })).toBeInstanceOf(AccessDenied)
      expect(yield* failure({ fileId: "nothing", apiKey: "guess" })).toBeInstanceOf(AccessDenied)
      expect(yield* failure({ fileId: "nothing", apiKey: "alice-key" })).toBeInstanceOf(FileNotFound)
      expect(yield* failure({ fileId: "survey", apiKey: "alice-key" })).toBeInstanceOf(AccessDenied)
    })
  )

  it.effect("counts the address before reading the body, and refuses an invalid body before the key", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const byAddress = TestRateLimiter.make({ limits: { clientAddress: 0 } }, journal)
      const body = { fileId: "contact", apiKey: "alice-key" }
      expect(yield* Effect.flip(run(input(body, journal), TestFileRepository.make(spec), byAddress))).toMatchObject({
        _tag: "RateLimited",
        scope: "clientAddress"
      })
      expect(journal).toEqual([`consume clientAddress ${ADDRESS}`])
      const byKey = TestRateLimiter.make({ limits: { apiKey: 0 } })
      const invalid = input({ ...body, limit: 0 }, [])
      expect(yield* Effect.flip(run(invalid, TestFileRepository.make(spec), byKey))).toBeInstanceOf(InvalidRequest)
      expect(byKey.count("apiKey alice-key")).toBe(0)
      expect(yield* Effect.flip(run(input(body, []), TestFileRepository.make(spec), byKey))).toMatchObject({
        _tag: "RateLimited",
        scope: "apiKey"
      })
    })
  )
})

describe("getChanges: validation", () => {
  const key = { fileId: "contact", apiKey: "alice-key" }
  const issues = (body: unknown) =>
    Effect.map(Effect.flip(GetChanges.parseRequest(body)), (failure) =>
      failure.issues.map((issue) => [issue.pointer, issue.detail])
    )
  const CURSOR = "must be the next of an earlier change feed reply for this file"

  it.effect("reads after's position, limit 1000 and wait 0 by default", () =>
    Effect.gen(function* () {
      expect(yield* GetChanges.parseRequest(key)).toMatchObject({ after: undefined, limit: 1000, wait: 0 })
      expect(
        yield* GetChanges.parseRequest({ ...key, after: cursorOf("contact", "42"), limit: 10_000, wait: 30 })
      ).toMatchObject({ after: "42", limit: 10_000, wait: 30 })
    })
  )

  it.effect("refuses on /after any text that is not a feed cursor of this file, the incremental read's too", () =>
    Effect.gen(function* () {
      for (const after of [
        SubmissionCursor.encode("contact" as FileId, "1704067200000:3"),
        SubmissionCursor.encode("contact" as FileId, "3"),
        cursorOf("poll", "3"),
        cursorOf("contact", "3").slice(0, -1),
        "garbage",
        ""
      ]) {
        const found = yield* issues({ ...key, after })
        expect(
          found.map(([pointer]) => pointer),
          after
        ).toEqual(["/after"])
      }
      expect(yield* issues({ ...key, after: "garbage" })).toEqual([["/after", CURSOR]])
      expect(yield* issues({ ...key, after: 3 })).toEqual([["/after", CURSOR]])
    })
  )

  it.effect("refuses limit and wait out of range and unknown fields, listing every problem at once", () =>
    Effect.gen(function* () {
      expect(yield* issues({ ...key, limit: 0, wait: 31, since: "2024-01-01T00:00:00Z", after: "x" })).toEqual([
        ["/since", "is not allowed"],
        ["/limit", "must be an integer from 1 to 10000"],
        ["/wait", "must be an integer from 0 to 30"],
        ["/after", CURSOR]
      ])
      expect(yield* issues({ ...key, limit: 10_001 })).toEqual([["/limit", "must be an integer from 1 to 10000"]])
      expect(yield* issues({ ...key, limit: 1.5 })).toEqual([["/limit", "must be an integer from 1 to 10000"]])
      expect(yield* issues({ apiKey: "alice-key" })).toEqual([["/fileId", "is required"]])
    })
  )

  it.effect("refuses through the use case with a 422's failure, before the key is counted", () =>
    Effect.gen(function* () {
      const limiter = TestRateLimiter.make()
      const body = { ...key, after: SubmissionCursor.encode("contact" as FileId, "0:1") }
      const failure = yield* Effect.flip(run(input(body, []), TestFileRepository.make(spec), limiter))
      expect(failure).toBeInstanceOf(InvalidRequest)
      expect((failure as InvalidRequest).issues).toEqual([new Issue({ pointer: "/after", detail: CURSOR })])
      expect(limiter.count("apiKey alice-key")).toBe(0)
    })
  )
})

describe("getChanges: reading", () => {
  it.effect("follows next from the first change to the last, each once, at most limit a reply", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make(spec)
      const seen: Array<string> = []
      let after: string | undefined
      for (let replies = 0; ; replies++) {
        const page = yield* ask(
          { fileId: "contact", apiKey: "alice-key", limit: 2, ...(after && { after }) },
          repository
        )
        expect(page.changes.length).toBeLessThanOrEqual(2)
        seen.push(...told(page))
        after = page.next
        if (!page.hasMore) break
        expect(replies).toBeLessThan(5)
      }
      expect(seen).toEqual(["created c0", "created c1", "created c2", "created c3", "created c4"])
      // Nothing new: no change, the same cursor, no more.
      expect(yield* ask({ fileId: "contact", apiKey: "alice-key", after }, repository)).toEqual({
        changes: [],
        next: after,
        hasMore: false
      })
    })
  )

  it.effect("an empty file's feed starts at its start, and the cursor continues there", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make(spec)
      const empty = yield* ask({ fileId: "empty", apiKey: "alice-key" }, repository)
      expect(empty).toEqual({ changes: [], next: cursorOf("empty", "0"), hasMore: false })
      repository.append("empty", dated(1, "e"))
      expect(told(yield* ask({ fileId: "empty", apiKey: "alice-key", after: empty.next }, repository))).toEqual([
        "created e0"
      ])
    })
  )

  it.effect("shows a backdated append after the changes before it, and an erasure as the erased change only", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make(spec)
      const start = (yield* ask({ fileId: "contact", apiKey: "alice-key" }, repository)).next
      const erased = repository.ids("contact")[1]
      // Earlier than every submission of the file: the incremental read's cursor would pass it by.
      repository.append("contact", dated(1, "backdated", JAN_1 - 86_400_000))
      repository.erase("contact", [erased as never])
      repository.append("contact", dated(1, "late"))
      const page = yield* ask({ fileId: "contact", apiKey: "alice-key", after: start }, repository)
      expect(told(page)).toEqual(["created backdated0", `erased ${erased}`, "created late0"])
      expect(page.changes[1]).toEqual({ type: "submission.erased", id: erased })
      // From the start, the erased submission's created change is gone.
      const whole = yield* ask({ fileId: "contact", apiKey: "alice-key" }, repository)
      expect(told(whole)).toEqual([
        "created c0",
        "created c2",
        "created c3",
        "created c4",
        "created backdated0",
        `erased ${erased}`,
        "created late0"
      ])
    })
  )

  it.effect("reads a reply over many pages up to limit, and says whether more changes were committed", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make({ ...spec, files: [{ id: "big", ownerId: "alice" }], pageSize: 3 })
      repository.append("big", dated(2500, "b"))
      const page = yield* ask({ fileId: "big", apiKey: "alice-key", limit: 2100 }, repository)
      expect(page.changes).toHaveLength(2100)
      expect(page.hasMore).toBe(true)
      const rest = yield* ask({ fileId: "big", apiKey: "alice-key", after: page.next, limit: 10_000 }, repository)
      expect(told(rest)).toEqual(Array.from({ length: 400 }, (_, i) => `created b${2100 + i}`))
      expect(rest.hasMore).toBe(false)
    })
  )

  it.effect("a reply read while changes are committed shows one moment: hasMore and next as at the start", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make({ ...spec, pageSize: 2 })
      const reply = yield* run(input({ fileId: "contact", apiKey: "alice-key", limit: 4 }, []), repository)
      repository.append("contact", dated(3, "x"))
      const page = yield* ChangesReply.toChangesPage(reply)
      expect(told(page)).toEqual(["created c0", "created c1", "created c2", "created c3"])
      expect(page.hasMore).toBe(true)
      const rest = yield* ask({ fileId: "contact", apiKey: "alice-key", after: page.next }, repository)
      expect(told(rest)).toEqual(["created c4", "created x0", "created x1", "created x2"])
    })
  )
})

describe("getChanges with wait", () => {
  const later = (n: string) => [{ createdDate: "2023-01-01T00:00:00.000Z", content: { n } }]

  const setup = Effect.map(WaitingRequests.make(), (waiting) => ({
    waiting,
    journal: Journal.make(),
    repository: TestFileRepository.make(spec)
  }))

  const waitFor = (s: Effect.Effect.Success<typeof setup>, body: Record<string, unknown>) =>
    Effect.flatMap(SubmissionSignals.SubmissionSignals, (signals) =>
      Effect.flatMap(
        GetChanges.runWith(
          {
            files: s.repository.repository,
            limiter: TestRateLimiter.make({}, s.journal).limiter,
            signals,
            waiting: s.waiting
          },
          input(body, [])
        ),
        ChangesReply.toChangesPage
      )
    )

  it.effect("answers with a backdated append or an erasure committed while it waits, counted once", () =>
    Effect.gen(function* () {
      const s = yield* setup
      yield* Effect.provide(
        Effect.gen(function* () {
          const after = (yield* waitFor(s, { fileId: "contact", apiKey: "alice-key" })).next
          const consumed = s.journal.length
          const waiter = yield* Effect.fork(waitFor(s, { fileId: "contact", apiKey: "alice-key", after, wait: 30 }))
          yield* TestClock.adjust("1 second")
          expect(Option.isNone(yield* Fiber.poll(waiter))).toBe(true)
          expect(s.waiting.size()).toBe(1)
          s.repository.append("contact", later("old"))
          yield* TestClock.adjust(SubmissionSignals.defaultIntervalMillis)
          const page = yield* Fiber.join(waiter)
          expect(told(page)).toEqual(["created old"])
          expect(s.journal.slice(consumed)).toEqual([`consume clientAddress ${ADDRESS}`, "consume apiKey alice-key"])

          const erasing = yield* Effect.fork(
            waitFor(s, { fileId: "contact", apiKey: "alice-key", after: page.next, wait: 30 })
          )
          yield* TestClock.adjust("1 second")
          const [first] = s.repository.ids("contact")
          s.repository.erase("contact", [first as never])
          yield* TestClock.adjust(SubmissionSignals.defaultIntervalMillis)
          expect(told(yield* Fiber.join(erasing))).toEqual([`erased ${first}`])
          expect(s.waiting.size()).toBe(0)
        }),
        s.repository.signals
      )
    })
  )

  it.effect("is not answered by another file's change, and gives the empty page with next unchanged at its end", () =>
    Effect.gen(function* () {
      const s = yield* setup
      yield* Effect.provide(
        Effect.gen(function* () {
          const after = (yield* waitFor(s, { fileId: "contact", apiKey: "alice-key" })).next
          const waiter = yield* Effect.fork(waitFor(s, { fileId: "contact", apiKey: "alice-key", after, wait: 5 }))
          yield* TestClock.adjust("1 second")
          s.repository.append("poll", later("p"))
          yield* TestClock.adjust("1 second")
          expect(Option.isNone(yield* Fiber.poll(waiter))).toBe(true)
          yield* TestClock.adjust("3 seconds")
          expect(yield* Fiber.join(waiter)).toEqual({ changes: [], next: after, hasMore: false })
        }),
        s.repository.signals
      )
    })
  )

  it.effect("ends with the empty page at once when the process stops", () =>
    Effect.gen(function* () {
      const s = yield* setup
      yield* Effect.provide(
        Effect.gen(function* () {
          const after = (yield* waitFor(s, { fileId: "contact", apiKey: "alice-key" })).next
          const waiter = yield* Effect.fork(waitFor(s, { fileId: "contact", apiKey: "alice-key", after, wait: 30 }))
          yield* TestClock.adjust("1 second")
          yield* s.waiting.stop
          expect(yield* Fiber.join(waiter)).toEqual({ changes: [], next: after, hasMore: false })
        }),
        s.repository.signals
      )
    })
  )
})
