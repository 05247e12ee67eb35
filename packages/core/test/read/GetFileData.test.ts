import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as FileDataReply from "../../src/read/FileDataReply.js"
import * as GetFileData from "../../src/read/GetFileData.js"
import { type StoredSubmission, timestampFromEpochMillis } from "../../src/shared/FileData.js"
import { AccessDenied, FileNotFound, InvalidRequest, Issue, RateLimited } from "../../src/shared/FileDataError.js"
import * as SubmissionEntry from "../../src/shared/SubmissionEntry.js"
import * as Journal from "../utils/Journal.js"
import { ADDRESS, input } from "../utils/Requests.js"
import * as TestFileRepository from "../utils/TestFileRepository.js"
import * as TestRateLimiter from "../utils/TestRateLimiter.js"

const run = (
  request: GetFileData.GetFileDataInput,
  repository: TestFileRepository.TestFileRepository,
  limiter: TestRateLimiter.TestRateLimiter = TestRateLimiter.make()
) => GetFileData.run(request).pipe(Effect.provide(Layer.merge(repository.layer, limiter.layer)))

const collectSubmissions = (reply: FileDataReply.FileDataReply) =>
  Effect.gen(function* () {
    const rows: Array<StoredSubmission> = []
    let after: string | undefined
    let hasMore = true
    while (hasMore) {
      const page = yield* FileDataReply.submissions(reply, after)
      rows.push(...page.entries.map(SubmissionEntry.parse))
      after = page.next
      hasMore = page.hasMore
    }
    return rows as ReadonlyArray<StoredSubmission>
  })

/** The element at `n` modulo the length; the arrays given here are never empty. */
const pick = <A>(items: ReadonlyArray<A>, n: number): A => {
  const item = items[n % items.length]
  if (item === undefined) throw new Error("pick from an empty array")
  return item
}

const pointers = (error: InvalidRequest) => error.issues.map((issue) => issue.pointer)

const spec: TestFileRepository.RepositorySpec = {
  users: [
    { id: "alice", apiKeys: ["alice-key-1", "alice-key-2"] },
    { id: "bob", apiKeys: ["bob-key"] },
    { id: "carol", apiKeys: ["carol-key"] }
  ],
  files: [
    {
      id: "contact",
      ownerId: "alice",
      name: "Contact form",
      creationDate: "2024-01-01T00:00:00.000Z",
      publicAvailability: true,
      SubmissionCounter: 7,
      VisitCounter: 42,
      submissions: [
        { createdDate: "2024-01-03T00:00:00.000Z", content: { email: "third@example.com" } },
        { createdDate: "2024-01-02T00:00:00.000Z", content: { email: "first@example.com" } },
        { createdDate: "2024-01-02T00:00:00.000Z", content: { email: "second@example.com" } }
      ]
    },
    { id: "survey", ownerId: "bob", submissions: [{ createdDate: "2024-02-01T00:00:00.000Z", content: { q: "a" } }] }
  ]
}

describe("getFileData: access", () => {
  it.effect("gives the owner the file, its counters and its submissions in createdDate order", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const repository = TestFileRepository.make(spec, journal)
      const reply = yield* run(input({ fileId: "contact", apiKey: "alice-key-2" }, journal), repository)
      expect(reply.file).toEqual({
        id: "contact",
        ownerId: "alice",
        name: "Contact form",
        creationDate: "2024-01-01T00:00:00.000Z",
        publicAvailability: true,
        SubmissionCounter: 7,
        VisitCounter: 42,
        readPoint: "4"
      })
      const rows = yield* collectSubmissions(reply)
      expect(rows.map((row) => JSON.parse(row.contentJson))).toEqual([
        { email: "first@example.com" },
        { email: "second@example.com" },
        { email: "third@example.com" }
      ])
    })
  )

  const nonEmpty = FastCheck.string({ minLength: 1, maxLength: 10 })
  const users = FastCheck.uniqueArray(
    FastCheck.record({ id: nonEmpty, apiKeys: FastCheck.uniqueArray(nonEmpty, { minLength: 1, maxLength: 3 }) }),
    { minLength: 1, maxLength: 4, selector: (user) => user.id }
  ).filter((users) => {
    const keys = users.flatMap((user) => user.apiKeys)
    return new Set(keys).size === keys.length
  })
  const submission = FastCheck.record({
    createdDate: FastCheck.integer({ min: 0, max: 4_102_444_800_000 }).map(timestampFromEpochMillis),
    content: FastCheck.dictionary(FastCheck.string(), FastCheck.string(), { maxKeys: 3 })
  })

  it.prop(
    "the file is given exactly when the caller owns it, otherwise AccessDenied",
    {
      users,
      fileId: nonEmpty,
      owner: FastCheck.nat(),
      caller: FastCheck.nat(),
      key: FastCheck.nat(),
      submissions: FastCheck.array(submission, { maxLength: 6 }),
      otherSubmissions: FastCheck.array(submission, { minLength: 1, maxLength: 2 })
    },
    ({ caller, fileId, key, otherSubmissions, owner, submissions, users }) =>
      Effect.runSync(
        Effect.gen(function* () {
          const ownerUser = pick(users, owner)
          const callerUser = pick(users, caller)
          const apiKey = pick(callerUser.apiKeys, key)
          const journal = Journal.make()
          const repository = TestFileRepository.make(
            {
              users,
              files: [
                { id: fileId, ownerId: ownerUser.id, submissions },
                // Another file of the caller, so a reply with the wrong file or its submissions shows.
                { id: `${fileId}/other`, ownerId: callerUser.id, submissions: otherSubmissions }
              ]
            },
            journal
          )
          const result = yield* Effect.either(
            run(input({ fileId, apiKey }, journal), repository, TestRateLimiter.make({}, journal))
          )
          if (ownerUser.id === callerUser.id) {
            expect(result._tag).toBe("Right")
            if (result._tag !== "Right") return
            expect(result.right.file).toEqual({ ...repository.file(fileId), readPoint: expect.any(String) })
            const rows = yield* collectSubmissions(result.right)
            expect(rows).toEqual(repository.submissions(fileId))
            expect(rows).toHaveLength(submissions.length)
            const dates = rows.map((row) => Date.parse(row.createdDate))
            expect(dates).toEqual([...dates].sort((a, b) => a - b))
          } else {
            expect(result._tag).toBe("Left")
            if (result._tag !== "Left") return
            expect(result.left).toBeInstanceOf(AccessDenied)
          }
          expect(journal).toEqual([
            `consume clientAddress ${ADDRESS}`,
            "body",
            `consume apiKey ${apiKey}`,
            `findAccess ${apiKey} ${fileId}`,
            ...(ownerUser.id === callerUser.id ? [`submissions ${fileId}`] : [])
          ])
        })
      ),
    { fastCheck: { numRuns: 100 } }
  )

  const knownKeys = new Set(spec.users.flatMap((user) => user.apiKeys))

  it.prop(
    "an unknown key is AccessDenied whether the file exists or not, and nothing more is read",
    {
      apiKey: FastCheck.string({ minLength: 1 }).filter((key) => !knownKeys.has(key)),
      fileId: FastCheck.constantFrom("contact", "survey", "no-such-file")
    },
    ({ apiKey, fileId }) =>
      Effect.runSync(
        Effect.gen(function* () {
          const journal = Journal.make()
          const error = yield* Effect.flip(
            run(input({ fileId, apiKey }, journal), TestFileRepository.make(spec, journal))
          )
          expect(error).toBeInstanceOf(AccessDenied)
          expect(journal.at(-1)).toBe(`findAccess ${apiKey} ${fileId}`)
        })
      ),
    { fastCheck: { numRuns: 100 } }
  )

  it.effect("a valid key and an unknown file is FileNotFound", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const error = yield* Effect.flip(
        run(input({ fileId: "no-such-file", apiKey: "bob-key" }, journal), TestFileRepository.make(spec, journal))
      )
      expect(error).toBeInstanceOf(FileNotFound)
      expect(journal.at(-1)).toBe("findAccess bob-key no-such-file")
    })
  )

  it.effect("a valid key of another user is AccessDenied, not FileNotFound", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        run(input({ fileId: "contact", apiKey: "carol-key" }, []), TestFileRepository.make(spec))
      )
      expect(error).toBeInstanceOf(AccessDenied)
    })
  )
})

describe("getFileData: validation", () => {
  const parse = (body: unknown) => Effect.flip(GetFileData.parseRequest(body))

  it.effect("accepts exactly { fileId, apiKey } and keeps the key redacted", () =>
    Effect.gen(function* () {
      const request = yield* GetFileData.parseRequest({ fileId: "contact", apiKey: "alice-key-1" })
      expect(request.fileId).toBe("contact")
      expect(Redacted.isRedacted(request.apiKey)).toBe(true)
      expect(Redacted.value(request.apiKey)).toBe("alice-key-1")
      expect(String(request.apiKey)).not.toContain("alice-key-1")
    })
  )

  const cases: ReadonlyArray<readonly [string, unknown, ReadonlyArray<Issue>]> = [
    [
      "both fields missing",
      {},
      [
        new Issue({ pointer: "/fileId", detail: "is required" }),
        new Issue({ pointer: "/apiKey", detail: "is required" })
      ]
    ],
    ["apiKey missing", { fileId: "contact" }, [new Issue({ pointer: "/apiKey", detail: "is required" })]],
    ["fileId missing", { apiKey: "k" }, [new Issue({ pointer: "/fileId", detail: "is required" })]],
    [
      "fileId not a string",
      { fileId: 12, apiKey: "k" },
      [new Issue({ pointer: "/fileId", detail: "must be a non-empty string" })]
    ],
    [
      "apiKey not a string",
      { fileId: "contact", apiKey: ["k"] },
      [new Issue({ pointer: "/apiKey", detail: "must be a non-empty string" })]
    ],
    [
      "fileId empty",
      { fileId: "", apiKey: "k" },
      [new Issue({ pointer: "/fileId", detail: "must be a non-empty string" })]
    ],
    [
      "apiKey empty",
      { fileId: "contact", apiKey: "" },
      [new Issue({ pointer: "/apiKey", detail: "must be a non-empty string" })]
    ],
    [
      "an unknown field",
      { fileId: "contact", apiKey: "k", extra: true },
      [new Issue({ pointer: "/extra", detail: "is not allowed" })]
    ],
    [
      "an unknown field whose name needs escaping",
      { fileId: "contact", apiKey: "k", "a/b~c": 1 },
      [new Issue({ pointer: "/a~1b~0c", detail: "is not allowed" })]
    ],
    [
      "a fileId one character too long, counted in code points",
      { fileId: "😀".repeat(257), apiKey: "k" },
      [new Issue({ pointer: "/fileId", detail: "must be at most 256 characters" })]
    ],
    [
      "a fileId holding U+0000",
      { fileId: "contact\u0000", apiKey: "k" },
      [new Issue({ pointer: "/fileId", detail: "must not contain the character U+0000" })]
    ],
    [
      "a fileId with a lone surrogate",
      { fileId: "contact\ud800", apiKey: "k" },
      [new Issue({ pointer: "/fileId", detail: "must be well-formed Unicode (no lone surrogate)" })]
    ],
    [
      "an apiKey with a lone surrogate and one holding U+0000",
      { fileId: "contact", apiKey: "\udc00k\u0000" },
      [new Issue({ pointer: "/apiKey", detail: "must not contain the character U+0000" })]
    ],
    ["an array", [], [new Issue({ pointer: "", detail: "must be a JSON object" })]],
    ["null", null, [new Issue({ pointer: "", detail: "must be a JSON object" })]],
    ["a string", "contact", [new Issue({ pointer: "", detail: "must be a JSON object" })]],
    ["a number", 42, [new Issue({ pointer: "", detail: "must be a JSON object" })]]
  ]

  it.effect.each(cases)("refuses %s as InvalidPayload, locating each problem", ([, body, issues]) =>
    Effect.gen(function* () {
      const error = yield* parse(body)
      expect(error).toBeInstanceOf(InvalidRequest)
      expect(error.reason).toBe("InvalidPayload")
      expect(error.issues).toEqual(issues)
    })
  )

  it.effect("lists every problem of a body at once", () =>
    Effect.gen(function* () {
      const error = yield* parse({ fileId: "", extra: 1 })
      expect(new Set(pointers(error))).toEqual(new Set(["/fileId", "/apiKey", "/extra"]))
      expect(error.omitted).toBe(0)
    })
  )

  it.effect("accepts ids of exactly 256 code points, astral ones too, by either path", () =>
    Effect.gen(function* () {
      for (const fileId of ["a".repeat(256), "😀".repeat(256)]) {
        expect((yield* GetFileData.parseRequest({ fileId, apiKey: "k" })).fileId).toBe(fileId)
        expect((yield* GetFileData.parseRequest({ apiKey: "k", fileId })).fileId).toBe(fileId)
        expect(Effect.runSync(Effect.either(GetFileData.parseRequest({ fileId, apiKey: "k", x: 1 })))._tag).toBe("Left")
      }
    })
  )

  it.effect("lists the first 20 problems of a body with thousands and counts the rest", () =>
    Effect.gen(function* () {
      const members = Array.from({ length: 8000 }, (_, i) => [`unknown-${i}`, i] as const)
      const error = yield* parse(Object.fromEntries([["fileId", 7], ["apiKey", "k"], ...members]))
      expect(pointers(error)).toEqual(Array.from({ length: 20 }, (_, i) => `/unknown-${i}`))
      // 7,980 unknown members and the fileId.
      expect(error.omitted).toBe(7981)
      expect(error.message.length).toBeLessThanOrEqual(1024)
      expect(error.message).toMatch(/^\/unknown-0: is not allowed; .*; and 7981 more$/)
    })
  )

  it.effect("lists fewer problems when their pointers are long, and cuts the message", () =>
    Effect.gen(function* () {
      const long = (i: number) => `${i}`.padEnd(1500, "x")
      const error = yield* parse(
        Object.fromEntries([["fileId", "f"], ["apiKey", "k"], ...[0, 1, 2, 3].map((i) => [long(i), 1])])
      )
      expect(pointers(error)).toEqual([`/${long(0)}`, `/${long(1)}`])
      expect(error.omitted).toBe(2)
      expect(error.message).toHaveLength(1024)
      expect(error.message.endsWith("…")).toBe(true)
    })
  )

  it.effect("an invalid body reaches neither the key quota nor the repository", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const limiter = TestRateLimiter.make({}, journal)
      const error = yield* Effect.flip(
        run(input({ fileId: "contact" }, journal), TestFileRepository.make(spec, journal), limiter)
      )
      expect(error).toBeInstanceOf(InvalidRequest)
      expect(journal).toEqual([`consume clientAddress ${ADDRESS}`, "body"])
    })
  )

  // Values a caller may send as apiKey in a body that is refused one way or another.
  const wrongKey = FastCheck.oneof(
    FastCheck.constant(""),
    FastCheck.integer(),
    FastCheck.double({ noNaN: true }),
    FastCheck.boolean(),
    FastCheck.constant(null),
    FastCheck.array(
      FastCheck.string({ minLength: 1 }).map((s) => `secret:${s}`),
      { minLength: 1, maxLength: 3 }
    ),
    FastCheck.dictionary(
      FastCheck.string(),
      FastCheck.string().map((s) => `secret:${s}`),
      { minKeys: 1 }
    )
  )
  const goodKey = FastCheck.string({ minLength: 1 }).map((s) => `secret:${s}`)
  const refusedBody = FastCheck.oneof(
    FastCheck.record({ fileId: FastCheck.string({ minLength: 1 }), apiKey: wrongKey }),
    FastCheck.record({ fileId: FastCheck.oneof(FastCheck.constant(""), FastCheck.integer()), apiKey: goodKey }),
    FastCheck.record({ fileId: FastCheck.string({ minLength: 1 }), apiKey: goodKey, extra: FastCheck.string() }),
    FastCheck.record({ apiKey: FastCheck.oneof(goodKey, wrongKey) })
  )

  it.prop(
    "no issue repeats the submitted apiKey",
    { body: refusedBody },
    ({ body }) =>
      Effect.runSync(
        Effect.gen(function* () {
          const error = yield* parse(body)
          expect(error.reason).toBe("InvalidPayload")
          expect(error.issues.length).toBeGreaterThan(0)
          const text = [error.message, ...error.issues.map((issue) => issue.detail)].join("\n")
          const key = body.apiKey
          if (typeof key === "string" && key !== "") expect(text).not.toContain(key)
          expect(text).not.toContain(JSON.stringify(key))
          if (Array.isArray(key)) for (const part of key) expect(text).not.toContain(part)
          if (typeof key === "object" && key !== null && !Array.isArray(key)) {
            for (const value of Object.values(key)) expect(text).not.toContain(value)
          }
        })
      ),
    { fastCheck: { numRuns: 200 } }
  )
})

describe("getFileData: order of checks", () => {
  it.effect("the client address is counted before the body is read", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const limiter = TestRateLimiter.make({ limits: { clientAddress: 0 } }, journal)
      const error = yield* Effect.flip(
        run(
          input({ fileId: "contact", apiKey: "alice-key-1" }, journal),
          TestFileRepository.make(spec, journal),
          limiter
        )
      )
      expect(error).toBeInstanceOf(RateLimited)
      expect(error).toMatchObject({ scope: "clientAddress", limit: 0 })
      expect(journal).toEqual([`consume clientAddress ${ADDRESS}`])
    })
  )

  it.effect("the client address is counted even when the body cannot be read, and that failure propagates", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const limiter = TestRateLimiter.make({}, journal)
      const unreadable = new InvalidRequest({
        reason: "MalformedJson",
        issues: [new Issue({ pointer: "", detail: "x" })]
      })
      const error = yield* Effect.flip(
        run({ clientAddress: ADDRESS, body: Effect.fail(unreadable) }, TestFileRepository.make(spec, journal), limiter)
      )
      expect(error).toBe(unreadable)
      expect(journal).toEqual([`consume clientAddress ${ADDRESS}`])
    })
  )

  it.effect("the key is counted after validation and before authentication", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const limiter = TestRateLimiter.make({ limits: { apiKey: 0 } }, journal)
      const error = yield* Effect.flip(
        run(
          input({ fileId: "contact", apiKey: "alice-key-1" }, journal),
          TestFileRepository.make(spec, journal),
          limiter
        )
      )
      expect(error).toBeInstanceOf(RateLimited)
      expect(error).toMatchObject({ scope: "apiKey", limit: 0 })
      expect(journal).toEqual([`consume clientAddress ${ADDRESS}`, "body", "consume apiKey alice-key-1"])
    })
  )

  it.effect("unknown keys are counted too, so key guessing is throttled", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const limiter = TestRateLimiter.make({ limits: { apiKey: 1 } }, journal)
      const repository = TestFileRepository.make(spec, journal)
      const guess = input({ fileId: "contact", apiKey: "guess" }, journal)
      expect(yield* Effect.flip(run(guess, repository, limiter))).toBeInstanceOf(AccessDenied)
      // Counted once the body was read: the refusal names the file, for the request's log line.
      expect(yield* Effect.flip(run(guess, repository, limiter))).toMatchObject({
        _tag: "RateLimited",
        scope: "apiKey",
        fileId: "contact"
      })
    })
  )

  it.effect("each key and each address has its own count", () =>
    Effect.gen(function* () {
      const limiter = TestRateLimiter.make({ limits: { apiKey: 2, clientAddress: 3 } })
      const repository = TestFileRepository.make(spec)
      const ask = (apiKey: string, address: string) =>
        Effect.either(run(input({ fileId: "contact", apiKey }, [], address), repository, limiter))
      expect((yield* ask("alice-key-1", "a"))._tag).toBe("Right")
      expect((yield* ask("alice-key-1", "b"))._tag).toBe("Right")
      expect(yield* ask("alice-key-1", "c")).toMatchObject({ left: { _tag: "RateLimited", scope: "apiKey" } })
      expect((yield* ask("alice-key-2", "a"))._tag).toBe("Right")
      expect((yield* ask("alice-key-2", "a"))._tag).toBe("Right")
      expect(yield* ask("bob-key", "a")).toMatchObject({ left: { _tag: "RateLimited", scope: "clientAddress" } })
      expect(yield* ask("bob-key", "a")).not.toHaveProperty("left.fileId")
      expect(limiter.count("apiKey alice-key-1")).toBe(3)
      expect(limiter.count("apiKey bob-key")).toBe(0)
    })
  )
})

describe("getFileData: a limiter that counts a request in one step", () => {
  const bodies = [
    { fileId: "contact", apiKey: "alice-key-1" },
    { fileId: "contact", apiKey: "guess" },
    { fileId: "contact", apiKey: "bob-key" },
    { fileId: "nope", apiKey: "alice-key-1" },
    { fileId: 1, apiKey: "alice-key-1" },
    "unreadable"
  ] as const
  const unreadable = new InvalidRequest({ reason: "MalformedJson", issues: [new Issue({ pointer: "", detail: "x" })] })
  const limit = FastCheck.constantFrom(0, 1, 2, Number.POSITIVE_INFINITY)

  // Each request's verdict and what it says of the request (`FileDataError.Subject`), and every subject's count, on one limiter.
  const serve = (
    inOneStep: boolean,
    limits: { readonly apiKey: number; readonly clientAddress: number },
    requests: ReadonlyArray<{ readonly address: string; readonly body: number }>
  ) => {
    const limiter = TestRateLimiter.make({ limits: { ...limits }, inOneStep })
    const repository = TestFileRepository.make(spec)
    const answers = requests.map(({ address, body }) => {
      const chosen = pick(bodies, body)
      const request = {
        clientAddress: address,
        body: chosen === "unreadable" ? Effect.fail(unreadable) : Effect.succeed(chosen)
      }
      const exit = Effect.runSyncExit(
        GetFileData.run(request).pipe(Effect.provide(Layer.merge(repository.layer, limiter.layer)))
      )
      const verdict = exit._tag === "Success" ? "ok" : JSON.stringify(exit.cause)
      const failure = exit._tag === "Failure" ? Cause.failureOption(exit.cause) : Option.none()
      const subject = Option.match(failure, {
        onNone: () => undefined,
        onSome: (refused) => ({
          fileId: (refused as { fileId?: string }).fileId,
          userId: (refused as { userId?: string }).userId
        })
      })
      return { verdict, subject }
    })
    const subjects = ["a", "b"].map((address) => `clientAddress ${address}`)
    const keys = ["alice-key-1", "guess", "bob-key"].map((key) => `apiKey ${key}`)
    return { answers, counts: [...subjects, ...keys].map((subject) => limiter.count(subject)) }
  }

  it.prop(
    "answers, logs and counts exactly as two counts in turn",
    [
      FastCheck.record({ apiKey: limit, clientAddress: limit }),
      FastCheck.array(
        FastCheck.record({ address: FastCheck.constantFrom("a", "b"), body: FastCheck.nat(bodies.length - 1) }),
        { minLength: 1, maxLength: 6 }
      )
    ],
    ([limits, requests]) => {
      expect(serve(true, limits, requests)).toEqual(serve(false, limits, requests))
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.effect("reads the body first, counts both at once, and only the address when the body is refused", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const limiter = TestRateLimiter.make({ inOneStep: true }, journal)
      const repository = TestFileRepository.make(spec)
      yield* run(input({ fileId: "contact", apiKey: "alice-key-1" }, journal), repository, limiter)
      yield* Effect.flip(run(input({ fileId: 1, apiKey: "alice-key-1" }, journal), repository, limiter))
      expect(journal).toEqual([
        "body",
        `consumeRequest ${ADDRESS} alice-key-1`,
        "body",
        `consume clientAddress ${ADDRESS}`
      ])
    })
  )
})

describe("getFileData: reading", () => {
  it.effect("never changes a counter, however often the file is read", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make(spec)
      for (let i = 0; i < 3; i++) {
        const reply = yield* run(input({ fileId: "contact", apiKey: "alice-key-1" }, []), repository)
        yield* collectSubmissions(reply)
        expect(reply.file.SubmissionCounter).toBe(7)
        expect(reply.file.VisitCounter).toBe(42)
      }
      expect(repository.file("contact")).toMatchObject({ SubmissionCounter: 7, VisitCounter: 42 })
    })
  )

  it.effect("the counters are the stored ones, not derived from the submissions", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make(spec)
      const reply = yield* run(input({ fileId: "contact", apiKey: "alice-key-1" }, []), repository)
      const rows = yield* collectSubmissions(reply)
      expect(rows).toHaveLength(3)
      expect(reply.file.SubmissionCounter).toBe(7)
    })
  )
})

describe("getFileData: one moment", () => {
  const dated = (day: number, n: number) => ({
    createdDate: timestampFromEpochMillis(Date.UTC(2024, 0, day)),
    content: { n: String(n) }
  })

  it.effect("a reply read while submissions are appended shows the file before the append, a later one after it", () =>
    Effect.gen(function* () {
      const before = Array.from({ length: 9 }, (_, i) => dated(2 + i, i))
      const repository = TestFileRepository.make({
        users: [{ id: "alice", apiKeys: ["alice-key"] }],
        files: [{ id: "f", ownerId: "alice", submissions: before }],
        pageSize: 2
      })
      const ask = run(input({ fileId: "f", apiKey: "alice-key" }, []), repository)
      const reply = yield* ask
      // Between the first page and the second, a writer appends around and inside the reply's range.
      const appended = [dated(1, 100), dated(5, 101), dated(30, 102)]
      const first = yield* FileDataReply.submissions(reply, undefined)
      repository.append("f", appended)
      const rows = [...first.entries.map(SubmissionEntry.parse)]
      let page = first
      while (page.hasMore) {
        page = yield* FileDataReply.submissions(reply, page.next)
        rows.push(...page.entries.map(SubmissionEntry.parse))
      }
      const stored = (submissions: ReadonlyArray<ReturnType<typeof dated>>) =>
        [...submissions]
          .sort((a, b) => Date.parse(a.createdDate) - Date.parse(b.createdDate))
          .map((row) => ({ createdDate: row.createdDate, contentJson: JSON.stringify(row.content) }))
      expect(reply.file.SubmissionCounter).toBe(9)
      expect(rows).toEqual(stored(before))

      const later = yield* ask
      expect(later.file.SubmissionCounter).toBe(12)
      expect(yield* collectSubmissions(later)).toEqual(stored([...before, ...appended]))
    })
  )
})
