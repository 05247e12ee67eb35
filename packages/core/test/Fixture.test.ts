import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Fixture from "../src/Fixture.js"

const file = (fields: Record<string, unknown> = {}) => ({
  id: "file-1",
  userId: "user-1",
  name: "Contact form",
  creationDate: "2024-01-01T00:00:00.000Z",
  ...fields
})

const refusal = (document: unknown) =>
  Effect.flip(Fixture.decode(document)).pipe(
    Effect.tap((error) => expect(error).toBeInstanceOf(Fixture.FixtureInvalid)),
    Effect.map((error) => error.issues.map((issue) => ({ path: issue.path, detail: issue.detail })))
  )

const paths = (document: unknown) => refusal(document).pipe(Effect.map((issues) => issues.map((issue) => issue.path)))

describe("Fixture.decode", () => {
  it.effect("reads the contract's example", () =>
    Effect.gen(function* () {
      const fixture = yield* Fixture.decode({
        users: [{ id: "user-1", apiKeys: ["a-plaintext-api-key"] }],
        files: [
          file({
            publicAvailability: true,
            SubmissionCounter: 2,
            VisitCounter: 10,
            submissions: [{ createdDate: "2024-01-02T09:30:00.000Z", content: { email: "a@example.com" } }]
          })
        ]
      })
      expect(fixture).toEqual({
        users: [{ id: "user-1", apiKeys: ["a-plaintext-api-key"] }],
        files: [
          {
            id: "file-1",
            userId: "user-1",
            name: "Contact form",
            creationDate: Date.UTC(2024, 0, 1),
            publicAvailability: true,
            SubmissionCounter: 2,
            VisitCounter: 10,
            submissions: [{ createdDate: Date.UTC(2024, 0, 2, 9, 30), contentJson: '{"email":"a@example.com"}' }]
          }
        ]
      })
    })
  )

  it.effect("applies the defaults", () =>
    Effect.gen(function* () {
      const bare = yield* Fixture.decode({ files: [file()] })
      expect(bare.users).toEqual([])
      expect(bare.files[0]).toMatchObject({
        SubmissionCounter: 0,
        VisitCounter: 0,
        publicAvailability: false,
        submissions: []
      })
      const twoSubmissions = yield* Fixture.decode({
        files: [
          file({
            submissions: [
              { createdDate: "2024-01-02T00:00:00.000Z", content: {} },
              { createdDate: "2024-01-03T00:00:00.000Z", content: { a: "b" } }
            ]
          })
        ]
      })
      expect(twoSubmissions.files[0]?.SubmissionCounter).toBe(2)
      expect(yield* Fixture.decode({})).toEqual({ users: [], files: [] })
      expect((yield* Fixture.decode({ users: [{ id: "u" }] })).users).toEqual([{ id: "u", apiKeys: [] }])
    })
  )

  it.effect("an explicit SubmissionCounter wins over the number of submissions, 0 included", () =>
    Effect.gen(function* () {
      const fixture = yield* Fixture.decode({
        files: [file({ SubmissionCounter: 0, submissions: [{ createdDate: "2024-01-02T00:00:00Z", content: {} }] })]
      })
      expect(fixture.files[0]?.SubmissionCounter).toBe(0)
    })
  )

  it.effect("keeps content as JSON text with its key order and __proto__", () =>
    Effect.gen(function* () {
      const content = JSON.parse('{"z":"1","__proto__":"p","a":"2","":"e"}')
      const fixture = yield* Fixture.decode({
        files: [file({ submissions: [{ createdDate: "2024-01-02T00:00:00Z", content }] })]
      })
      expect(fixture.files[0]?.submissions[0]?.contentJson).toBe('{"z":"1","__proto__":"p","a":"2","":"e"}')
    })
  )

  it.effect.each([
    ["2024-01-01T02:00:00.000+02:00", Date.UTC(2024, 0, 1)],
    ["2023-12-31T19:30:00-04:30", Date.UTC(2024, 0, 1)],
    ["2024-01-01T00:00Z", Date.UTC(2024, 0, 1)],
    ["2024-01-01T00:00:00.123456Z", Date.UTC(2024, 0, 1, 0, 0, 0, 123)],
    ["2024-02-29T23:59:59.999Z", Date.UTC(2024, 1, 29, 23, 59, 59, 999)],
    ["0000-01-01T00:00:00.000Z", Date.parse("0000-01-01T00:00:00.000Z")]
  ] as const)("reads the instant %s as UTC epoch milliseconds", ([text, millis]) =>
    Effect.gen(function* () {
      const fixture = yield* Fixture.decode({
        files: [file({ creationDate: text, submissions: [{ createdDate: text, content: {} }] })]
      })
      expect(fixture.files[0]?.creationDate).toBe(millis)
      expect(fixture.files[0]?.submissions[0]?.createdDate).toBe(millis)
    })
  )

  it.effect.each([
    "2024-01-01T00:00:00",
    "2024-01-01T00:00:00.000",
    "2024-01-01",
    "2024-01-01 00:00:00Z",
    "1704067200000",
    "2024-02-30T00:00:00.000Z",
    "2023-02-29T00:00:00.000Z",
    "2024-01-01T24:00:00.000Z",
    "2024-01-01T10:60:00Z",
    "+010000-01-01T00:00:00.000Z",
    "0000-01-01T00:00:00.000+01:00"
  ])("refuses the instant %s", (text) =>
    Effect.gen(function* () {
      const issues = yield* refusal({ files: [file({ creationDate: text })] })
      expect(issues).toEqual([
        {
          path: "$.files[0].creationDate",
          detail: "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
        }
      ])
    })
  )

  it.effect("refuses a content value that is not a string, naming its path", () =>
    Effect.gen(function* () {
      const issues = yield* refusal({
        files: [file({ submissions: [{ createdDate: "2024-01-02T00:00:00Z", content: { name: "Ann", age: 41 } }] })]
      })
      expect(issues).toEqual([{ path: "$.files[0].submissions[0].content.age", detail: "must be a string" }])
      expect(
        yield* paths({ files: [file({ submissions: [{ createdDate: "2024-01-02T00:00:00Z", content: ["x"] }] })] })
      ).toEqual(["$.files[0].submissions[0].content"])
      expect(
        yield* paths({
          files: [file({ submissions: [{ createdDate: "2024-01-02T00:00:00Z", content: { "a b": null } }] })]
        })
      ).toEqual(['$.files[0].submissions[0].content["a b"]'])
    })
  )

  it.effect("refuses unknown fields at every level, naming each, and nothing else", () =>
    Effect.gen(function* () {
      const issues = yield* refusal({
        extra: 1,
        users: [{ id: "user-1", apiKeys: [], role: "admin" }],
        files: [file({ owner: "x", submissions: [{ createdDate: "2024-01-02T00:00:00Z", content: {}, id: 3 }] })]
      })
      expect(issues).toEqual([
        { path: "$.extra", detail: "is not allowed" },
        { path: "$.users[0].role", detail: "is not allowed" },
        { path: "$.files[0].owner", detail: "is not allowed" },
        { path: "$.files[0].submissions[0].id", detail: "is not allowed" }
      ])
    })
  )

  it.effect("refuses missing and mistyped fields, one issue each", () =>
    Effect.gen(function* () {
      const issues = yield* refusal({
        users: [{ apiKeys: ["k"] }],
        files: [{ id: "", userId: "u", creationDate: "2024-01-01T00:00:00Z", VisitCounter: -1 }]
      })
      expect(issues.map((issue) => issue.path)).toEqual([
        "$.users[0].id",
        "$.files[0].id",
        "$.files[0].name",
        "$.files[0].VisitCounter"
      ])
      expect(issues[0]?.detail).toBe("is required")
      expect(issues[2]?.detail).toBe("is required")
    })
  )

  it.effect("refuses duplicate user ids, file ids and API keys, naming the second occurrence", () =>
    Effect.gen(function* () {
      const issues = yield* refusal({
        users: [
          { id: "user-1", apiKeys: ["k1", "k1"] },
          { id: "user-1", apiKeys: ["k2"] },
          { id: "user-2", apiKeys: ["k2"] }
        ],
        files: [file(), file({ id: "file-2" }), file()]
      })
      expect(issues).toEqual([
        { path: "$.users[1].id", detail: "user id appears twice" },
        { path: "$.users[0].apiKeys[1]", detail: "API key appears twice" },
        { path: "$.users[2].apiKeys[0]", detail: "API key appears twice" },
        { path: "$.files[2].id", detail: "file id appears twice" }
      ])
    })
  )

  it.effect("a file id equal to a user id is no duplicate", () =>
    Effect.gen(function* () {
      const fixture = yield* Fixture.decode({
        users: [{ id: "same", apiKeys: ["same"] }],
        files: [file({ id: "same" })]
      })
      expect(fixture.files).toHaveLength(1)
    })
  )

  it.effect.each([null, [], "fixture", 1])("refuses the document %j at the root", (document) =>
    Effect.gen(function* () {
      expect(yield* paths(document)).toEqual(["$"])
    })
  )
})

describe("Fixture.jsonPath", () => {
  it("renders identifiers with dots and everything else in brackets", () => {
    expect(Fixture.jsonPath([])).toBe("$")
    expect(Fixture.jsonPath(["files", 0, "submissions", 12, "createdDate"])).toBe(
      "$.files[0].submissions[12].createdDate"
    )
    expect(Fixture.jsonPath(["_a", "$b", "c9", "__proto__"])).toBe("$._a.$b.c9.__proto__")
    expect(Fixture.jsonPath(["0"])).toBe('$["0"]')
    expect(Fixture.jsonPath(["9lives"])).toBe('$["9lives"]')
    expect(Fixture.jsonPath([""])).toBe('$[""]')
    expect(Fixture.jsonPath(["a b"])).toBe('$["a b"]')
    expect(Fixture.jsonPath(["a.b"])).toBe('$["a.b"]')
    expect(Fixture.jsonPath(['say "hi"'])).toBe('$["say \\"hi\\""]')
    expect(Fixture.jsonPath(["a]b"])).toBe('$["a]b"]')
    expect(Fixture.jsonPath(["é"])).toBe('$["é"]')
    expect(Fixture.jsonPath(["line\nbreak"])).toBe('$["line\\nbreak"]')
  })
})

describe("Fixture.collect", () => {
  it.effect("stages a decoded fixture's submissions with their file's position and keeps the outline", () =>
    Effect.gen(function* () {
      const fixture = yield* Fixture.decode({
        users: [{ id: "user-1", apiKeys: ["k"] }],
        files: [
          file({ id: "empty" }),
          file({
            id: "two",
            submissions: [
              { createdDate: "2024-01-02T00:00:00Z", content: { a: "1" } },
              { createdDate: "2024-01-01T00:00:00Z", content: { a: "2" } }
            ]
          })
        ]
      })
      const staged: Array<ReadonlyArray<Fixture.FileSubmission>> = []
      const outline = yield* Fixture.collect(fixture, (batch) => Effect.sync(() => void staged.push(batch)))
      expect(outline).toEqual({
        users: fixture.users,
        files: fixture.files.map(({ submissions: _, ...header }) => header),
        submissions: 2
      })
      expect(staged).toEqual([
        [
          { file: 1, createdDate: Date.UTC(2024, 0, 2), contentJson: '{"a":"1"}' },
          { file: 1, createdDate: Date.UTC(2024, 0, 1), contentJson: '{"a":"2"}' }
        ]
      ])
    })
  )

  it.effect("passes a failure of the stream or of staging on", () =>
    Effect.gen(function* () {
      const failing = Stream.fail("gone" as const)
      expect(yield* Effect.flip(Fixture.collect(failing, () => Effect.void))).toBe("gone")
      const fixture = yield* Fixture.decode({
        files: [file({ submissions: [{ createdDate: "2024-01-02T00:00:00Z", content: {} }] })]
      })
      expect(yield* Effect.flip(Fixture.collect(fixture, () => Effect.fail("full" as const)))).toBe("full")
    })
  )
})

describe("Fixture.FixtureInvalid", () => {
  it("lists its issues and counts the ones left out", () => {
    const issues = [new Fixture.FixtureIssue({ path: "$.users[0].id", detail: "is required" })]
    expect(new Fixture.FixtureInvalid({ issues }).message).toBe("$.users[0].id: is required")
    expect(new Fixture.FixtureInvalid({ issues, omitted: 3 }).message).toBe("$.users[0].id: is required\nand 3 more")
  })
})
