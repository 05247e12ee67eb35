/**
 * The `textRules` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { FileRepository, OperatorStore, TextRules } from "@filedata/core"
import { AppendDocument, FixtureDocument } from "@filedata/fixture"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Fixtures from "./fixtures.js"

/**
 * The text rules: ids at the longest length, any character kept, refusals by path.
 *
 * @internal
 */
export const textRules = (withStorage: Fixtures.WithStorage): void => {
  describe("text rules", () => {
    const longest = TextRules.maxIdLength
    // The issues of a refusal in path order: decoding problems and storage's are compared as sets.
    const byPath = (issues: unknown) =>
      Array.isArray(issues) ? [...issues].sort((a, b) => a.path.localeCompare(b.path)) : issues
    // Ids at the limit in code points: ASCII, two-byte, and astral (two UTF-16 units and four UTF-8 bytes each).
    const limitIds = ["a".repeat(longest), "é".repeat(longest), "😀".repeat(longest), `${"x".repeat(longest - 1)}😀`]

    it.effect("keeps ids of exactly the longest length, astral ones too, and finds them by id", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        const store = yield* OperatorStore.OperatorStore
        yield* Fixtures.importDocument({
          users: limitIds.map((id, i) => ({ id, apiKeys: [`key-${i}`] })),
          files: limitIds.map((id) =>
            Fixtures.file({ id, userId: id, submissions: Fixtures.submissionsEverySecond(2) })
          )
        })
        for (const [i, id] of limitIds.entries()) {
          const { owner, file: found } = yield* files.findAccess(Fixtures.apiKey(`key-${i}`), Fixtures.fileId(id))
          expect(owner).toEqual(Option.some(id))
          expect(Option.map(found, (f) => [f.id, f.ownerId])).toEqual(Option.some([id, id]))
          expect(yield* Fixtures.readSubmissions(id)).toHaveLength(2)
          expect(yield* store.userExists(Fixtures.userId(id))).toBe(true)
          expect((yield* store.listKeys(Option.some(Fixtures.userId(id)))).map((key) => key.userId)).toEqual([id])
        }
        const created = yield* store.createKey(Fixtures.userId(limitIds[2] as string), Fixtures.apiKey("created"))
        expect(created.userId).toBe(limitIds[2])
      }).pipe(withStorage())
    )

    // Astral characters, combining marks (decomposed é), U+FFFD, right-to-left text with its marks, a zero
    // width joiner sequence, and a byte order mark inside the text.
    const texts = [
      "𝒻𝓇𝑜𝓂 𝓉𝒽𝑒 𝒶𝓈𝓉𝓇𝒶𝓁 𝓅𝓁𝒶𝓃𝑒 😀",
      "e\u0301 n\u0303 a\u030a\u0301",
      "\ufffd replaced \ufffd",
      "שלום עולם \u200f مرحبا \u202bبالعالم\u202c",
      "👩‍👩‍👧 \ufeff mid-text BOM",
      "\u0001\u001f\u007f\u2028\u2029"
    ]

    it.effect("gives back names, content keys and values with any character byte for byte", () =>
      Effect.gen(function* () {
        const content = Object.fromEntries(texts.map((text, i) => [`${text} ${i}`, text]))
        yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: texts.map((name, i) => ({
            ...Fixtures.file({
              id: `f${i}`,
              userId: "u1",
              submissions: [{ createdDate: "2024-01-02T00:00:00.000Z", content }]
            }),
            name
          }))
        })
        for (const [i, name] of texts.entries()) {
          const found = yield* Fixtures.findFile("k1", `f${i}`)
          const stored = Option.getOrThrow(Option.map(found, (f) => f.name))
          expect(Buffer.from(stored, "utf8").equals(Buffer.from(name, "utf8"))).toBe(true)
          const rows = yield* Fixtures.readSubmissions(`f${i}`)
          expect(rows.map((row) => row.contentJson)).toEqual([JSON.stringify(content)])
        }
      }).pipe(withStorage())
    )

    it.effect("takes ids as given, never normalised: composed and decomposed é are two files", () =>
      Effect.gen(function* () {
        const composed = "caf\u00e9"
        const decomposed = "cafe\u0301"
        yield* Fixtures.importDocument({
          users: [{ id: composed, apiKeys: ["k1"] }, { id: decomposed }],
          files: [
            Fixtures.file({ id: composed, userId: composed }),
            Fixtures.file({ id: decomposed, userId: decomposed })
          ]
        })
        expect(Option.map(yield* Fixtures.findFile("k1", composed), (f) => f.ownerId)).toEqual(Option.some(composed))
        expect(Option.map(yield* Fixtures.findFile("k1", decomposed), (f) => f.ownerId)).toEqual(
          Option.some(decomposed)
        )
      }).pipe(withStorage())
    )

    it.effect("refuses by path what breaks the rules, and writes nothing of the fixture", () =>
      Effect.gen(function* () {
        const document = {
          users: [{ id: "u\u0000" }, { id: "u-ok", apiKeys: ["k\ud800"] }],
          files: [
            Fixtures.file({ id: "x".repeat(longest + 1), userId: "u-ok" }),
            Fixtures.file({ id: "😀".repeat(longest + 1), userId: "u-ok" }),
            {
              ...Fixtures.file({
                id: "f-ok",
                userId: "u-ok",
                submissions: [
                  { createdDate: "2024-01-02T00:00:00.000Z", content: { "a\u0000": "v" } },
                  { createdDate: "2024-01-02T00:00:00.000Z", content: { k: "\ud83d" } }
                ]
              }),
              name: "lone \udc00 low surrogate"
            }
          ]
        }
        const expected = [
          { path: "$.users[0].id", detail: TextRules.messages.nul },
          { path: "$.users[1].apiKeys[0]", detail: TextRules.messages.illFormed },
          { path: "$.files[0].id", detail: TextRules.messages.tooLong },
          { path: "$.files[1].id", detail: TextRules.messages.tooLong },
          { path: '$.files[2].submissions[0].content["a\\u0000"]', detail: `name ${TextRules.messages.nul}` },
          { path: "$.files[2].submissions[1].content.k", detail: TextRules.messages.illFormed },
          { path: "$.files[2].name", detail: TextRules.messages.illFormed }
        ]
        expect(byPath(Fixtures.issuesOf(yield* Effect.flip(Fixtures.importDocument(document))))).toEqual(
          byPath(expected)
        )
        expect(byPath(Fixtures.issuesOf(yield* Effect.flip(FixtureDocument.decode(document))))).toEqual(
          byPath(expected)
        )
        const left = yield* Fixtures.census({ users: ["u-ok"], files: ["f-ok"] })
        expect(left).toEqual({ users: 0, apiKeys: 0, files: 0, submissions: 0 })
      }).pipe(withStorage())
    )

    it.effect("appends to files of the longest ids, texts kept byte for byte, under the same rules", () =>
      Effect.gen(function* () {
        const content = Object.fromEntries(texts.map((text, i) => [`${text} ${i}`, text]))
        const at = "2024-01-02T00:00:00.000Z"
        yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: [...limitIds, "f-ok"].map((id) => Fixtures.file({ id, userId: "u1" }))
        })
        expect(
          yield* Fixtures.appendDocument({
            files: limitIds.map((id) => ({ id, submissions: [{ createdDate: at, content }], VisitCounter: 1 }))
          })
        ).toEqual({ files: limitIds.length, submissions: limitIds.length })
        for (const id of limitIds) {
          expect((yield* Fixtures.readSubmissions(id)).map((row) => row.contentJson)).toEqual([JSON.stringify(content)])
        }
        const document = {
          files: [
            {
              id: "f-ok",
              VisitCounter: 9,
              submissions: [
                { createdDate: at, content: { "a\u0000": "v" } },
                { createdDate: at, content: { k: "\ud83d" } }
              ]
            },
            { id: "x".repeat(longest + 1), submissions: [{ createdDate: at, content }] },
            { id: "😀".repeat(longest + 1), VisitCounter: 1 },
            { id: "f\u0000" },
            { id: "lone \udc00" },
            { id: limitIds[0], VisitCounter: 5, submissions: [{ createdDate: at, content }] }
          ]
        }
        const expected = [
          { path: '$.files[0].submissions[0].content["a\\u0000"]', detail: `name ${TextRules.messages.nul}` },
          { path: "$.files[0].submissions[1].content.k", detail: TextRules.messages.illFormed },
          { path: "$.files[1].id", detail: TextRules.messages.tooLong },
          { path: "$.files[2].id", detail: TextRules.messages.tooLong },
          { path: "$.files[3].id", detail: TextRules.messages.nul },
          { path: "$.files[4].id", detail: TextRules.messages.illFormed }
        ]
        expect(byPath(Fixtures.issuesOf(yield* Effect.flip(Fixtures.appendDocument(document))))).toEqual(
          byPath(expected)
        )
        expect(byPath(Fixtures.issuesOf(yield* Effect.flip(AppendDocument.decode(document))))).toEqual(byPath(expected))
        const counters = (id: string) =>
          Effect.map(
            Fixtures.findFile("k1", id),
            Option.map((f) => [f.SubmissionCounter, f.VisitCounter])
          )
        expect(yield* counters("f-ok")).toEqual(Option.some([0, 0]))
        expect(yield* counters(limitIds[0] as string)).toEqual(Option.some([1, 1]))
        expect(yield* Fixtures.readSubmissions("f-ok")).toEqual([])
        expect(yield* Fixtures.readSubmissions(limitIds[0] as string)).toHaveLength(1)
      }).pipe(withStorage())
    )
  })
}
