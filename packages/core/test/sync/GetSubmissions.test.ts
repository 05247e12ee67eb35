import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { type FileId, timestampFromEpochMillis } from "../../src/shared/FileData.js"
import { AccessDenied, FileNotFound, InvalidRequest, Issue, RateLimited } from "../../src/shared/FileDataError.js"
import * as FileRepository from "../../src/shared/FileRepository.js"
import * as GetSubmissions from "../../src/sync/GetSubmissions.js"
import * as SubmissionCursor from "../../src/sync/SubmissionCursor.js"
import * as SubmissionsEncoder from "../../src/sync/SubmissionsEncoder.js"
import * as SubmissionsReply from "../../src/sync/SubmissionsReply.js"
import * as Journal from "../utils/Journal.js"
import { ADDRESS, input } from "../utils/Requests.js"
import * as TestFileRepository from "../utils/TestFileRepository.js"
import * as TestRateLimiter from "../utils/TestRateLimiter.js"

const run = (
  request: GetSubmissions.GetSubmissionsInput,
  repository: TestFileRepository.TestFileRepository,
  limiter: TestRateLimiter.TestRateLimiter = TestRateLimiter.make()
) =>
  GetSubmissions.run(request).pipe(Effect.provide(Layer.mergeAll(repository.layer, limiter.layer, repository.signals)))

/** The reply of a request as the contract writes it, parsed. */
const ask = (body: Record<string, unknown>, repository: TestFileRepository.TestFileRepository) =>
  Effect.flatMap(run(input(body, []), repository), SubmissionsReply.toSubmissionsPage)

const JAN_1 = Date.UTC(2024, 0, 1)
const at = (millis: number) => timestampFromEpochMillis(millis)
const iso = (millis: number) => new Date(millis).toISOString()

// A submission a second, with ties, so pages break inside tie groups.
const dated = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => ({
    createdDate: at(JAN_1 + Math.floor(i / 2) * 1000),
    content: { n: `${tag}${i}` }
  }))

const spec: TestFileRepository.RepositorySpec = {
  users: [
    { id: "alice", apiKeys: ["alice-key"] },
    { id: "bob", apiKeys: ["bob-key"] }
  ],
  files: [
    { id: "contact", ownerId: "alice", submissions: dated(7, "c") },
    { id: "poll", ownerId: "alice", submissions: dated(5, "p") },
    { id: "survey", ownerId: "bob", submissions: dated(3, "s") },
    { id: "empty", ownerId: "alice" }
  ]
}

const contents = (page: SubmissionsReply.SubmissionsPage) =>
  page.submissions.map((submission) => submission.content.n ?? "")

describe("getSubmissions: access", () => {
  it.effect("gives the owner the submissions in reply order, with the same checks in the same order", () =>
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
      const page = yield* SubmissionsReply.toSubmissionsPage(reply)
      expect(journal.at(-1)).toBe("submissions contact")
      const ids = repository.ids("contact")
      expect(page.submissions).toEqual(
        repository.submissions("contact").map((row, i) => ({
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
      const journal = Journal.make()
      const repository = TestFileRepository.make(spec, journal)
      const failure = (body: unknown) => Effect.flip(run(input(body, journal), repository))
      expect(yield* failure({ fileId: "contact", apiKey: "guess" })).toBeInstanceOf(AccessDenied)
      expect(yield* failure({ fileId: "nothing", apiKey: "guess" })).toBeInstanceOf(AccessDenied)
      expect(yield* failure({ fileId: "nothing", apiKey: "alice-key" })).toBeInstanceOf(FileNotFound)
      expect(yield* failure({ fileId: "survey", apiKey: "alice-key" })).toBeInstanceOf(AccessDenied)
    })
  )

  it.effect("counts the address before reading the body and the key after it, like GetFileData", () =>
    Effect.gen(function* () {
      const journal = Journal.make()
      const body = { fileId: "contact", apiKey: "alice-key", limit: 0 }
      const byAddress = TestRateLimiter.make({ limits: { clientAddress: 0 } }, journal)
      expect(yield* Effect.flip(run(input(body, journal), TestFileRepository.make(spec), byAddress))).toMatchObject({
        _tag: "RateLimited",
        scope: "clientAddress"
      })
      expect(journal).toEqual([`consume clientAddress ${ADDRESS}`])
      // An invalid body is refused before the key is counted; a valid one is counted.
      const byKey = TestRateLimiter.make({ limits: { apiKey: 0 } })
      expect(yield* Effect.flip(run(input(body, []), TestFileRepository.make(spec), byKey))).toBeInstanceOf(
        InvalidRequest
      )
      const valid = input({ fileId: "contact", apiKey: "alice-key" }, [])
      expect(yield* Effect.flip(run(valid, TestFileRepository.make(spec), byKey))).toBeInstanceOf(RateLimited)
      expect(byKey.count("apiKey alice-key")).toBe(1)
    })
  )
})

describe("getSubmissions: validation", () => {
  const parse = (body: unknown) => Effect.flip(GetSubmissions.parseRequest(body))
  const key = { fileId: "contact", apiKey: "alice-key" }
  const cursorOf = (fileId: string, position: string) => SubmissionCursor.encode(fileId as FileId, position)
  const INSTANT = "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
  const LIMIT = "must be an integer from 1 to 10000"
  const CURSOR = "must be the next of an earlier reply for this file"

  it.effect("reads the bounds: instants with any zone in UTC milliseconds, the cursor's position, limit 1000", () =>
    Effect.gen(function* () {
      expect(yield* GetSubmissions.parseRequest(key)).toMatchObject({
        fileId: "contact",
        since: undefined,
        until: undefined,
        after: undefined,
        limit: 1000
      })
      const request = yield* GetSubmissions.parseRequest({
        ...key,
        since: "2024-01-01T02:00:00+02:00",
        until: "2024-01-02T00:00:00.5Z",
        after: cursorOf("contact", "123:4"),
        limit: 10_000
      })
      expect(request).toMatchObject({
        since: JAN_1,
        until: JAN_1 + 86_400_500,
        after: "123:4",
        limit: 10_000
      })
      expect(Redacted.value(request.apiKey)).toBe("alice-key")
      // An empty window is a window.
      expect(yield* GetSubmissions.parseRequest({ ...key, since: iso(JAN_1), until: iso(JAN_1) })).toMatchObject({
        since: JAN_1,
        until: JAN_1
      })
    })
  )

  const cases: ReadonlyArray<readonly [string, unknown, ReadonlyArray<Issue>]> = [
    [
      "nothing",
      {},
      [
        new Issue({ pointer: "/fileId", detail: "is required" }),
        new Issue({ pointer: "/apiKey", detail: "is required" })
      ]
    ],
    ["not an object", [key], [new Issue({ pointer: "", detail: "must be a JSON object" })]],
    [
      "an unknown field",
      { ...key, sinse: "2024-01-01T00:00:00Z" },
      [new Issue({ pointer: "/sinse", detail: "is not allowed" })]
    ],
    [
      "since without a zone",
      { ...key, since: "2024-01-01T00:00:00" },
      [new Issue({ pointer: "/since", detail: INSTANT })]
    ],
    ["since as a number", { ...key, since: JAN_1 }, [new Issue({ pointer: "/since", detail: INSTANT })]],
    ["since null", { ...key, since: null }, [new Issue({ pointer: "/since", detail: INSTANT })]],
    [
      "until past year 9999",
      { ...key, until: "+010000-01-01T00:00:00Z" },
      [new Issue({ pointer: "/until", detail: INSTANT })]
    ],
    [
      "until impossible",
      { ...key, until: "2024-02-30T00:00:00Z" },
      [new Issue({ pointer: "/until", detail: INSTANT })]
    ],
    [
      "until before since",
      { ...key, since: "2024-01-02T00:00:00Z", until: "2024-01-01T23:59:59.999Z" },
      [new Issue({ pointer: "/until", detail: "must not be before since" })]
    ],
    ["limit 0", { ...key, limit: 0 }, [new Issue({ pointer: "/limit", detail: LIMIT })]],
    ["limit 10001", { ...key, limit: 10_001 }, [new Issue({ pointer: "/limit", detail: LIMIT })]],
    ["limit 1.5", { ...key, limit: 1.5 }, [new Issue({ pointer: "/limit", detail: LIMIT })]],
    ["limit as text", { ...key, limit: "5" }, [new Issue({ pointer: "/limit", detail: LIMIT })]],
    ["after empty", { ...key, after: "" }, [new Issue({ pointer: "/after", detail: CURSOR })]],
    ["after a number", { ...key, after: 5 }, [new Issue({ pointer: "/after", detail: CURSOR })]],
    ["after garbage", { ...key, after: "not a cursor" }, [new Issue({ pointer: "/after", detail: CURSOR })]],
    [
      "after of another file",
      { ...key, after: cursorOf("poll", "0:1") },
      [new Issue({ pointer: "/after", detail: CURSOR })]
    ],
    [
      "a fileId over 256 characters",
      { ...key, fileId: "😀".repeat(257) },
      [new Issue({ pointer: "/fileId", detail: "must be at most 256 characters" })]
    ],
    [
      "a fileId holding U+0000, with a cursor that cannot be of it",
      { ...key, fileId: "contact\u0000", after: cursorOf("contact", "0:1") },
      [new Issue({ pointer: "/fileId", detail: "must not contain the character U+0000" })]
    ],
    [
      "an apiKey with a lone surrogate",
      { ...key, apiKey: "alice-key\ud800" },
      [new Issue({ pointer: "/apiKey", detail: "must be well-formed Unicode (no lone surrogate)" })]
    ],
    [
      "after cut short",
      { ...key, after: cursorOf("contact", "1704067200000:12").slice(0, -2) },
      [new Issue({ pointer: "/after", detail: CURSOR })]
    ]
  ]

  it.effect.each(cases)("refuses %s, naming each field", ([, body, issues]) =>
    Effect.gen(function* () {
      const error = yield* parse(body)
      expect(error.reason).toBe("InvalidPayload")
      expect(error.issues).toEqual(issues)
    })
  )

  it.effect("lists every problem of a body at once, those between fields too", () =>
    Effect.gen(function* () {
      const error = yield* parse({
        fileId: "contact",
        since: "2024-01-02T00:00:00Z",
        until: "2024-01-01T00:00:00Z",
        after: cursorOf("poll", "0:1"),
        limit: -1,
        extra: true
      })
      expect(new Set(error.issues.map((issue) => issue.pointer))).toEqual(
        new Set(["/apiKey", "/limit", "/extra", "/after", "/until"])
      )
    })
  )

  it.effect("lists at most 20 problems and counts the rest, as GetFileData does", () =>
    Effect.gen(function* () {
      const unknown = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`x${i}`, i]))
      const error = yield* parse({ ...key, limit: 0, ...unknown })
      expect(error.issues).toHaveLength(20)
      // Unknown members are told first; only the first 20 of them are decoded at all.
      expect(error.issues.map((issue) => issue.pointer)).toEqual(Array.from({ length: 20 }, (_, i) => `/x${i}`))
      expect(error.omitted).toBe(11)
      expect(error.message).toMatch(/; and 11 more$/)
    })
  )

  const secret = FastCheck.string({ minLength: 1 }).map((s) => `secret:${s}`)
  const wrong = FastCheck.oneof(
    secret,
    FastCheck.integer(),
    FastCheck.constant(null),
    FastCheck.array(secret, { maxLength: 2 })
  )

  it.prop(
    "no issue repeats a value of the body",
    {
      apiKey: FastCheck.oneof(secret, wrong),
      since: wrong,
      until: wrong,
      after: wrong,
      limit: wrong
    },
    (fields) =>
      Effect.runSync(
        Effect.gen(function* () {
          const error = yield* parse({ fileId: "contact", ...fields })
          const text = [error.message, ...error.issues.map((issue) => `${issue.pointer} ${issue.detail}`)].join("\n")
          for (const value of Object.values(fields)) {
            for (const part of Array.isArray(value) ? value : [value]) {
              if (typeof part === "string") expect(text).not.toContain(part)
            }
          }
        })
      ),
    { fastCheck: { numRuns: 200 } }
  )

  it.prop(
    "any other after is refused on /after, or reads only the requested file's submissions",
    { after: FastCheck.oneof(FastCheck.string({ minLength: 1 }), FastCheck.stringMatching(/^[A-Za-z0-9_-]{1,40}$/)) },
    ({ after }) =>
      Effect.runSync(
        Effect.gen(function* () {
          const repository = TestFileRepository.make(spec)
          const result = yield* Effect.either(ask({ fileId: "contact", apiKey: "alice-key", after }, repository))
          if (result._tag === "Left") {
            expect(result.left).toMatchObject({ _tag: "InvalidRequest", issues: [{ pointer: "/after" }] })
          } else {
            for (const n of contents(result.right)) expect(n).toMatch(/^c/)
          }
        })
      ),
    { fastCheck: { numRuns: 300 } }
  )
})

describe("getSubmissions: reading", () => {
  const model = (since: number | undefined, until: number | undefined) =>
    dated(7, "c")
      .filter(
        (row) =>
          (since === undefined || Date.parse(row.createdDate) >= since) &&
          (until === undefined || Date.parse(row.createdDate) < until)
      )
      .map((row) => row.content.n)

  it.prop(
    "a sync loop gets the window once, in order, at most limit a reply, hasMore until the last",
    {
      limit: FastCheck.option(FastCheck.integer({ min: 1, max: 4 }), { nil: undefined }),
      since: FastCheck.option(FastCheck.integer({ min: -1, max: 4 }), { nil: undefined }),
      until: FastCheck.option(FastCheck.integer({ min: -1, max: 5 }), { nil: undefined })
    },
    ({ limit, since, until }) =>
      Effect.runSync(
        Effect.gen(function* () {
          const repository = TestFileRepository.make(spec)
          const bounds = {
            ...(since === undefined ? {} : { since: iso(JAN_1 + since * 1000) }),
            ...(until === undefined ? {} : { until: iso(JAN_1 + until * 1000) }),
            ...(limit === undefined ? {} : { limit })
          }
          if (since !== undefined && until !== undefined && until < since) return
          const read: Array<string> = []
          let after: string | undefined
          for (let i = 0; i < 20; i++) {
            const page = yield* ask(
              { fileId: "contact", apiKey: "alice-key", ...bounds, ...(after ? { after } : {}) },
              repository
            )
            expect(page.submissions.length).toBeLessThanOrEqual(limit ?? 1000)
            read.push(...contents(page))
            // Nothing read: the cursor is the one sent.
            if (page.submissions.length === 0 && after !== undefined) expect(page.next).toBe(after)
            after = page.next
            if (!page.hasMore) break
            expect(page.submissions).toHaveLength(limit ?? 1000)
          }
          expect(read).toEqual(
            model(
              since === undefined ? undefined : JAN_1 + since * 1000,
              until === undefined ? undefined : JAN_1 + until * 1000
            )
          )
          // What is appended later, with a later createdDate, follows the last cursor.
          repository.append("contact", [{ createdDate: at(JAN_1 + 4000), content: { n: "new" } }])
          const next = yield* ask({ fileId: "contact", apiKey: "alice-key", ...bounds, after }, repository)
          expect(contents(next)).toEqual(until === undefined || until > 4 ? ["new"] : [])
          expect(next.hasMore).toBe(false)
        })
      ),
    { fastCheck: { numRuns: 100 } }
  )

  it.effect("reads over many pages up to limit, and says whether more matched", () =>
    Effect.gen(function* () {
      const many = Array.from({ length: 2600 }, (_, i) => ({ createdDate: at(JAN_1 + i), content: { n: String(i) } }))
      const repository = TestFileRepository.make({
        ...spec,
        files: [{ id: "big", ownerId: "alice", submissions: many }],
        pageSize: 7
      })
      const body = { fileId: "big", apiKey: "alice-key" }
      const first = yield* ask(body, repository)
      expect(contents(first)).toEqual(many.slice(0, 1000).map((row) => row.content.n))
      expect(first.hasMore).toBe(true)
      const rest = yield* ask({ ...body, after: first.next, limit: 10_000 }, repository)
      expect(contents(rest)).toEqual(many.slice(1000).map((row) => row.content.n))
      expect(rest.hasMore).toBe(false)
      // Exactly what is left: no more after it, though the reply may hold more.
      const exact = yield* ask({ ...body, after: first.next, limit: 1600 }, repository)
      expect(exact.hasMore).toBe(false)
      expect(exact.next).toBe(rest.next)
      const short = yield* ask({ ...body, after: first.next, limit: 1599 }, repository)
      expect(short.hasMore).toBe(true)
    })
  )

  it.effect("asks for the position at the range's end; an adapter that leaves it out is a defect", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make(spec)
      const ranges: Array<FileRepository.SubmissionRange> = []
      const forgetful = TestFileRepository.make(spec)
      const withoutEnd: FileRepository.FileRepository = {
        ...forgetful.repository,
        readSubmissions: (fileId, range) =>
          Effect.map(forgetful.repository.readSubmissions(fileId, range), (page) => {
            ranges.push(range)
            return page.hasMore ? page : { ...page, next: undefined }
          })
      }
      const body = { fileId: "contact", apiKey: "alice-key" }
      expect((yield* ask(body, repository)).next).toEqual(expect.any(String))
      const exit = yield* Effect.exit(
        ask(body, {
          ...forgetful,
          repository: withoutEnd,
          layer: Layer.succeed(FileRepository.FileRepository, withoutEnd)
        })
      )
      expect(ranges.every((range) => range.endPosition === undefined)).toBe(true)
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    })
  )

  it.effect("an empty file or window answers no submissions, no more, and a cursor to continue from", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make(spec)
      const empty = yield* ask({ fileId: "empty", apiKey: "alice-key" }, repository)
      expect(empty).toMatchObject({ submissions: [], hasMore: false })
      expect(yield* ask({ fileId: "empty", apiKey: "alice-key", after: empty.next }, repository)).toEqual(empty)
      repository.append("empty", [{ createdDate: at(0), content: { n: "first" } }])
      expect(contents(yield* ask({ fileId: "empty", apiKey: "alice-key", after: empty.next }, repository))).toEqual([
        "first"
      ])
    })
  )

  it.effect("a reply read while submissions are appended shows one moment: hasMore and next as at the start", () =>
    Effect.gen(function* () {
      const many = Array.from({ length: 2500 }, (_, i) => ({ createdDate: at(JAN_1 + i), content: { n: String(i) } }))
      const repository = TestFileRepository.make({
        ...spec,
        files: [{ id: "big", ownerId: "alice", submissions: many }]
      })
      const reply = yield* run(input({ fileId: "big", apiKey: "alice-key", limit: 2500 }, []), repository)
      const pieces: Array<string> = []
      yield* SubmissionsEncoder.writeTo(reply, (piece) =>
        Effect.sync(() => {
          // Once the first page is out, a writer appends before, among and after what is left to read.
          if (pieces.length === 0) {
            repository.append("big", [
              { createdDate: at(JAN_1 - 1), content: { n: "before" } },
              { createdDate: at(JAN_1 + 1500), content: { n: "among" } },
              { createdDate: at(JAN_1 + 9999), content: { n: "after" } }
            ])
          }
          pieces.push(typeof piece === "string" ? piece : new TextDecoder().decode(piece))
        })
      )
      const written = JSON.parse(pieces.join("")) as SubmissionsReply.SubmissionsPage
      expect(pieces.length).toBeGreaterThan(1)
      expect(contents(written)).toEqual(many.map((row) => row.content.n))
      expect(written.hasMore).toBe(false)
      const next = yield* ask({ fileId: "big", apiKey: "alice-key", after: written.next }, repository)
      expect(contents(next)).toEqual(["after"])
    })
  )
})
