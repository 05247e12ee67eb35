import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Stream from "effect/Stream"
import * as Fixture from "../src/Fixture.js"
import * as FixtureReader from "../src/FixtureReader.js"

// Test data ------------------------------------------------------------------------------------------------

const MIN = Date.parse("0000-01-01T00:00:00.000Z")
const MAX = Date.parse("9999-12-31T23:59:59.999Z")

// Characters that stress a tokenizer: escapes, controls, lone and paired surrogates, multi-byte UTF-8.
const char = FastCheck.oneof(
  FastCheck.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  FastCheck.constantFrom('"', "\\", "/", "\u0000", "\n", "\u001f", "\u007f", "é", "€", "😀", "\ud800", "\udfff")
)
const text = FastCheck.string({ unit: char, maxLength: 6 })
const key = FastCheck.oneof(text, FastCheck.constantFrom("__proto__", "constructor", "0", "10", "1e3", "", "a b"))
// A small pool, so that ids and keys sometimes appear twice.
const id = FastCheck.oneof(FastCheck.constantFrom("a", "b", "c"), text)

const junk = FastCheck.oneof(
  FastCheck.constant(null),
  FastCheck.boolean(),
  FastCheck.integer(),
  FastCheck.double({ noNaN: true, noDefaultInfinity: true }),
  text,
  FastCheck.array(FastCheck.integer(), { maxLength: 2 }),
  FastCheck.dictionary(key, FastCheck.integer(), { maxKeys: 2 })
)

// Mostly what the field wants, sometimes anything.
const field = <A>(valid: FastCheck.Arbitrary<A>) =>
  FastCheck.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: junk })

const instant = FastCheck.oneof(
  FastCheck.integer({ min: MIN, max: MAX }).map((millis) => new Date(millis).toISOString()),
  FastCheck.tuple(
    FastCheck.integer({ min: Date.UTC(1, 0, 2), max: Date.UTC(9999, 11, 30) }),
    FastCheck.integer({ min: -1439, max: 1439 })
  ).map(([millis, minutes]) => {
    const wall = new Date(millis + minutes * 60_000).toISOString().slice(0, -1)
    const abs = Math.abs(minutes)
    return `${wall}${minutes < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`
  }),
  FastCheck.constantFrom("2024-02-30T00:00:00.000Z", "2024-01-01T00:00:00", "yesterday", "")
)

// An object of the fields given, in any key order, now and then missing one or carrying one more.
const entry = (fields: Record<string, FastCheck.Arbitrary<unknown>>) =>
  FastCheck.tuple(
    FastCheck.oneof(
      { weight: 12, arbitrary: FastCheck.record(fields) },
      { weight: 1, arbitrary: FastCheck.record(fields, { requiredKeys: [] }) }
    ),
    FastCheck.oneof(
      { weight: 12, arbitrary: FastCheck.constant({}) },
      { weight: 1, arbitrary: FastCheck.dictionary(key, junk, { maxKeys: 1 }) }
    )
  ).chain(([known, extra]) => {
    const members = [...Object.entries(known), ...Object.entries(extra)]
    return FastCheck.shuffledSubarray(members, { minLength: members.length, maxLength: members.length }).map(
      (shuffled) => Object.fromEntries(shuffled) as Record<string, unknown>
    )
  })

const optional = (fields: Record<string, FastCheck.Arbitrary<unknown>>) =>
  FastCheck.record(fields, { requiredKeys: [] })

const submission = entry({
  createdDate: field(instant),
  content: field(FastCheck.dictionary(key, field(text), { maxKeys: 4 }))
})

const file = FastCheck.tuple(
  entry({ id: field(id), userId: field(id), name: field(text), creationDate: field(instant) }),
  optional({
    publicAvailability: field(FastCheck.boolean()),
    SubmissionCounter: field(FastCheck.nat()),
    VisitCounter: field(FastCheck.nat()),
    submissions: field(FastCheck.array(submission, { maxLength: 5 }))
  })
).map(([required, rest]) => ({ ...rest, ...required }))

const user = FastCheck.tuple(
  entry({ id: field(id) }),
  optional({ apiKeys: field(FastCheck.array(field(id), { maxLength: 3 })) })
).map(([required, rest]) => ({ ...required, ...rest }))

const fixtureDocument = FastCheck.oneof(
  {
    weight: 20,
    arbitrary: entry({
      users: field(FastCheck.array(user, { maxLength: 3 })),
      files: field(FastCheck.array(file, { maxLength: 3 }))
    })
  },
  { weight: 1, arbitrary: junk }
)

const indentation = FastCheck.constantFrom(undefined, 2, "\t", " \r")

/** `text` cut at the given points (taken modulo its length), so a chunk may end anywhere. */
const cut = <A extends string | Uint8Array>(whole: A, points: ReadonlyArray<number>): Array<A> => {
  const at = [...new Set(points.map((point) => point % (whole.length + 1)))].sort((a, b) => a - b)
  return [...at, whole.length].map((end, i) => whole.slice(i === 0 ? 0 : at[i - 1], end) as A)
}

// Helpers ----------------------------------------------------------------------------------------------------

/** The entries put back together into the shape of a fixture decoded whole. */
const assemble = (entries: ReadonlyArray<Fixture.FixtureEntry>): Fixture.Fixture => {
  const users: Array<Fixture.FixtureUser> = []
  const files: Array<Fixture.FixtureFileHeader> = []
  const submissions: Array<Fixture.FileSubmission> = []
  for (const item of entries) {
    if (item._tag === "User") users.push(item.user)
    else if (item._tag === "File") files.push(item.file)
    else submissions.push(...item.submissions)
  }
  return {
    users,
    files: files.map((header, index) => ({
      ...header,
      submissions: submissions
        .filter((submission) => submission.file === index)
        .map(({ contentJson, createdDate }) => ({ createdDate, contentJson }))
    }))
  }
}

const sortedIssues = (issues: ReadonlyArray<Fixture.FixtureIssue>) =>
  issues.map((issue) => `${issue.path}: ${issue.detail}`).sort()

/** What the reader makes of a stream: the fixture, the sorted issues, or the malformed JSON error. */
const outcome = <E>(entries: Stream.Stream<Fixture.FixtureEntry, E>) =>
  Stream.runCollect(entries).pipe(
    Effect.map((collected) => Either.right(assemble(Chunk.toReadonlyArray(collected)))),
    Effect.catchAll((error) =>
      Effect.succeed(Either.left(error instanceof Fixture.FixtureInvalid ? sortedIssues(error.issues) : error))
    )
  )

/** What the whole-document decode makes of the same text. */
const expected = (json: string) => Either.mapLeft(Fixture.decodeEither(JSON.parse(json)), sortedIssues)

const read = (chunks: ReadonlyArray<string>, options?: FixtureReader.ReadOptions) =>
  FixtureReader.fromText(Stream.fromIterable(chunks), options)

const failure = (chunks: ReadonlyArray<string>) => Effect.flip(Stream.runDrain(read(chunks)))

const issuesOf = (json: string) =>
  Effect.map(failure([json]), (error) =>
    error instanceof Fixture.FixtureInvalid ? error.issues.map((issue) => `${issue.path}: ${issue.detail}`) : error
  )

const malformed = (json: string) =>
  Effect.map(failure([json]), (error) =>
    error instanceof FixtureReader.FixtureMalformed ? error.message : `not malformed: ${String(error)}`
  )

const fileText = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({ id: "f", userId: "u", name: "Form", creationDate: "2024-01-01T00:00:00.000Z", ...fields })

const submissionsText = (count: number) =>
  Array.from({ length: count }, (_, i) =>
    JSON.stringify({ createdDate: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(), content: { i: String(i) } })
  )

// Tests ------------------------------------------------------------------------------------------------------

describe("FixtureReader", () => {
  it.effect.prop(
    "gives the fixture, or the issues, of the whole-document decode, whatever the chunk boundaries",
    { document: fixtureDocument, indent: indentation, points: FastCheck.array(FastCheck.nat(), { maxLength: 30 }) },
    ({ document, indent, points }) =>
      Effect.gen(function* () {
        const json = JSON.stringify(document, null, indent)
        expect(yield* outcome(read(cut(json, points), { batchSize: 2 }))).toEqual(expected(json))
      }),
    { fastCheck: { numRuns: 400 } }
  )

  it.effect.prop(
    "reads UTF-8 bytes cut anywhere, inside a character too",
    { document: fixtureDocument, points: FastCheck.array(FastCheck.nat(), { maxLength: 30 }) },
    ({ document, points }) =>
      Effect.gen(function* () {
        const json = JSON.stringify(document)
        const bytes = cut(new TextEncoder().encode(json), points)
        expect(yield* outcome(FixtureReader.fromBytes(Stream.fromIterable(bytes)))).toEqual(expected(json))
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "refuses text as malformed exactly when JSON.parse does",
    {
      document: fixtureDocument,
      edit: FastCheck.tuple(
        FastCheck.nat(),
        FastCheck.constantFrom("insert", "delete", "truncate"),
        FastCheck.constantFrom(
          "{",
          "}",
          "[",
          "]",
          ",",
          ":",
          '"',
          "\\",
          "a",
          "1",
          "-",
          ".",
          "e",
          "+",
          " ",
          "\n",
          "\u0001",
          "t",
          "n",
          "0",
          "\u00a0"
        )
      ),
      points: FastCheck.array(FastCheck.nat(), { maxLength: 10 })
    },
    ({ document, edit: [at, how, inserted], points }) =>
      Effect.gen(function* () {
        const json = JSON.stringify(document, null, 1)
        const i = at % (json.length + 1)
        const edited =
          how === "insert"
            ? json.slice(0, i) + inserted + json.slice(i)
            : how === "delete"
              ? json.slice(0, i) + json.slice(i + 1)
              : json.slice(0, i)
        const parses = Either.isRight(Either.try(() => JSON.parse(edited)))
        const result = yield* outcome(read(cut(edited, points)))
        expect(Either.isLeft(result) && result.left instanceof FixtureReader.FixtureMalformed).toBe(!parses)
      }),
    { fastCheck: { numRuns: 400 } }
  )

  it.effect("keeps content as the JSON text JSON.stringify gives: escapes, __proto__, the engine's key order", () =>
    Effect.gen(function* () {
      const content = '{"z":"1","__proto__":"p","a":"\\u0041\\/","":"e","2":"two","emoji":"\\ud83d\\ude00 😀"}'
      const json = `{"files":[${fileText({ submissions: "S" })}],"users":[{"id":"u"}]}`.replace(
        '"S"',
        `[{"createdDate":"2024-01-02T00:00:00Z","content":${content}}]`
      )
      const result = yield* outcome(read(cut(json, [30, 31, 95, 96, 97, 98, 120])))
      expect(result).toEqual(expected(json))
      expect(Either.map(result, (fixture) => fixture.files[0]?.submissions[0]?.contentJson)).toEqual(
        Either.right('{"2":"two","z":"1","__proto__":"p","a":"A/","":"e","emoji":"😀 😀"}')
      )
    })
  )

  it.effect("takes the members in any order: users after files, a file's id after its submissions", () =>
    Effect.gen(function* () {
      const json = `{
        "files": [{ "submissions": [${submissionsText(3).join(",")}], "userId": "u", "name": "N",
                    "creationDate": "2024-01-01T00:00:00Z", "id": "f" }],
        "users": [{ "apiKeys": ["k"], "id": "u" }]
      }`
      const entries = yield* Stream.runCollect(read([json], { batchSize: 2 }))
      expect(Chunk.toReadonlyArray(entries).map((item) => item._tag)).toEqual([
        "Submissions",
        "File",
        "User",
        "Submissions"
      ])
      expect(Either.right(assemble(Chunk.toReadonlyArray(entries)))).toEqual(expected(json))
    })
  )

  it.effect("hands out users and batches of submissions before the document ends", () =>
    Effect.gen(function* () {
      const head = `{"users":[{"id":"u"}],"files":[${fileText().slice(0, -1)},"submissions":[${submissionsText(5).join(",")},`
      const first = yield* Stream.runCollect(
        FixtureReader.fromText(Stream.concat(Stream.make(head), Stream.never), { batchSize: 2 }).pipe(Stream.take(3))
      )
      expect(
        Chunk.toReadonlyArray(first).map((item) => (item._tag === "Submissions" ? item.submissions.length : item._tag))
      ).toEqual(["User", 2, 2])
    })
  )

  it.effect("hands out nothing after the first refused entry", () =>
    Effect.gen(function* () {
      const submissions = submissionsText(10)
      submissions[4] = '{"createdDate":"yesterday","content":{}}'
      const json = `{"users":[{"id":"u"}],"files":[${fileText({ submissions: "S" })}]}`.replace(
        '"S"',
        `[${submissions.join(",")}]`
      )
      const handedOut: Array<Fixture.FixtureEntry> = []
      const error = yield* Effect.flip(
        Stream.runForEach(read(cut(json, [100, 200, 300, 400, 500]), { batchSize: 2 }), (item) =>
          Effect.sync(() => handedOut.push(item))
        )
      )
      expect(error).toBeInstanceOf(Fixture.FixtureInvalid)
      expect(assemble(handedOut).users).toEqual([{ id: "u", apiKeys: [] }])
      const staged = handedOut.flatMap((item) => (item._tag === "Submissions" ? item.submissions : []))
      expect(staged.length).toBeLessThanOrEqual(4)
    })
  )

  it.effect("names problems at every level by JSON path", () =>
    Effect.gen(function* () {
      expect(yield* issuesOf("[]")).toEqual([expect.stringMatching(/^\$: Expected .*, actual \[\]$/)])
      expect(yield* issuesOf('{"users":[],"extra":{"big":[1,2,3]}}')).toEqual(["$.extra: is not allowed"])
      expect(yield* issuesOf('{"users":{}}')).toEqual([expect.stringMatching(/^\$\.users: /)])
      expect(yield* issuesOf('{"users":[{"id":""},{"id":"u","role":"admin"}]}')).toEqual([
        "$.users[0].id: must be a non-empty string",
        "$.users[1].role: is not allowed"
      ])
      expect(yield* issuesOf('{"files":[5]}')).toHaveLength(1)
      expect(yield* issuesOf(`{"files":[${fileText({ name: undefined, VisitCounter: -1 })}]}`)).toEqual([
        "$.files[0].name: is required",
        expect.stringMatching(/^\$\.files\[0\]\.VisitCounter: /)
      ])
      expect(yield* issuesOf(`{"users":[{"id":"u"}],"files":[${fileText({ submissions: {} })}]}`)).toEqual([
        expect.stringMatching(/^\$\.files\[0\]\.submissions: /)
      ])
      expect(
        yield* issuesOf(
          `{"users":[{"id":"u"}],"files":[${fileText({
            submissions: [
              { createdDate: "2024-01-01T00:00:00Z", content: { ok: "1" } },
              { createdDate: "2024-13-01T00:00:00Z", content: { "a b": 1, ok: "2" }, id: 3 }
            ]
          })}]}`
        )
      ).toEqual([
        "$.files[0].submissions[1].id: is not allowed",
        "$.files[0].submissions[1].createdDate: must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z",
        '$.files[0].submissions[1].content["a b"]: must be a string'
      ])
    })
  )

  it.effect("refuses a second users, files or submissions member, which it cannot take back", () =>
    Effect.gen(function* () {
      expect(yield* issuesOf('{"users":[],"files":[],"users":[]}')).toEqual(["$.users: appears twice"])
      expect(
        yield* issuesOf(
          `{"users":[{"id":"u"}],"files":[${fileText({ submissions: [] }).slice(0, -1)},"submissions":[]}]}`
        )
      ).toEqual(["$.files[0].submissions: appears twice"])
    })
  )

  it.effect("refuses ids and keys that appear twice, as the whole-document decode does", () =>
    Effect.gen(function* () {
      const json = `{"files":[${fileText({ id: "f", userId: "u" })},${fileText({ id: "f", userId: "u" })}],
        "users":[{"id":"u","apiKeys":["k","k"]},{"id":"u"}]}`
      expect(yield* issuesOf(json)).toEqual([
        "$.users[1].id: user id appears twice",
        "$.users[0].apiKeys[1]: API key appears twice",
        "$.files[1].id: file id appears twice"
      ])
    })
  )

  it.effect("lists at most issueLimit issues and counts the rest", () =>
    Effect.gen(function* () {
      const bad = Array.from({ length: FixtureReader.issueLimit + 5 }, () => '{"createdDate":"never","content":{}}')
      const json = `{"users":[{"id":"u"}],"files":[${fileText({ submissions: "S" })}]}`.replace(
        '"S"',
        `[${bad.join(",")}]`
      )
      const error = yield* failure([json])
      expect(error).toBeInstanceOf(Fixture.FixtureInvalid)
      if (error instanceof Fixture.FixtureInvalid) {
        expect(error.issues).toHaveLength(FixtureReader.issueLimit)
        expect(error.omitted).toBe(5)
        expect(error.message.split("\n").at(-1)).toBe("and 5 more")
      }
    })
  )

  it.effect.each([
    ["", "unexpected end of the document, expected a value at line 1, column 1"],
    ["  \n ", "unexpected end of the document, expected a value at line 2, column 2"],
    ['{ "users": [ { "id": "x" }, ] }', 'unexpected "]", expected a value at line 1, column 29'],
    ['{"users": [}', 'unexpected "}", expected a value or ] at line 1, column 12'],
    ['{"users" []}', 'unexpected "[", expected : at line 1, column 10'],
    ["{users: []}", 'unexpected "u", expected a string key or } at line 1, column 2'],
    ['{"users": [],}', 'unexpected "}", expected a string key at line 1, column 14'],
    ['{"users": []\n"files": []}', 'unexpected "\\"", expected , or } at line 2, column 1'],
    ["{}\n{}", 'unexpected "{", expected the end of the document at line 2, column 1'],
    ['{"users": [{"id": "a\nb"}]}', "unescaped control character U+000A in a string at line 1, column 21"],
    ['{"users": [{"id": "a\\qb"}]}', "invalid escape \\q in a string at line 1, column 21"],
    ['{"users": [{"id": "\\u12G4"}]}', 'invalid hexadecimal digit "G" in a \\u escape at line 1, column 24'],
    ['{"users": [{"id": 01}]}', 'invalid number "01" at line 1, column 19'],
    ['{"users": [{"id": -}]}', 'invalid number "-" at line 1, column 19'],
    ['{"users": [{"id": tru}]}', 'unexpected "tru", expected a value at line 1, column 19'],
    ['{"users": [{"id": "open', "the document ends inside a string at line 1, column 19"],
    ['{"users": [', "unexpected end of the document, expected a value or ] at line 1, column 12"],
    ["\ufeff{}", 'unexpected "\ufeff", expected a value at line 1, column 1']
  ] as const)("refuses the malformed text %j, naming where", ([json, message]) =>
    Effect.gen(function* () {
      expect(yield* malformed(json)).toBe(message)
    })
  )

  it.effect("counts lines and columns across chunks", () =>
    Effect.gen(function* () {
      const error = yield* failure(cut('{\n  "users": [\n    {"id": "u"},\n    x\n  ]\n}', [3, 7, 20, 30]))
      expect(error).toEqual(
        new FixtureReader.FixtureMalformed({ line: 4, column: 5, detail: 'unexpected "x", expected a value' })
      )
    })
  )

  it.effect("passes the text stream's own failure on", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Stream.runDrain(
          FixtureReader.fromText(Stream.concat(Stream.make('{"users":['), Stream.fail("disk gone" as const)))
        )
      )
      expect(error).toBe("disk gone")
    })
  )
})
