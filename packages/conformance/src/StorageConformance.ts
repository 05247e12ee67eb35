/**
 * The behaviour every storage adapter owes the core, as one suite of tests that runs unchanged against each
 * adapter of the `FileRepository` and `OperatorStore` ports.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import type { FileDataError } from "@filedata/core"
import {
  Append,
  FileData,
  FileDataJson,
  FileRepository,
  Fixture,
  GetFileData,
  OperatorStore,
  type RateLimiter,
  SubmissionEntry,
  SubmissionSignals,
  TextRules
} from "@filedata/core"
import { AppendDocument, AppendReader, FixtureDocument, FixtureReader } from "@filedata/fixture"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"

/**
 * Builds the adapter under test. Every call must give an empty store of its own, released with the layer.
 *
 * @since 0.1.0
 * @category models
 */
export type MakeStorage = (options: {
  readonly pageSize: number
}) => Layer.Layer<FileRepository.FileRepository | OperatorStore.OperatorStore, FileDataError.StorageUnavailable>

// A submission as the tests write it: an instant in any ISO 8601 form with a zone, and its content.
interface NewSubmission {
  readonly createdDate: string
  readonly content: Readonly<Record<string, string>>
}

const fileId = (id: string): FileData.FileId => FileData.FileId.make(id)
const userId = (id: string): FileData.UserId => FileData.UserId.make(id)
const apiKey = (text: string): FileData.ApiKey => Redacted.make(FileData.ApiKeyText.make(text))

/** The text of a document cut into pieces of `size` characters, as a file arrives. */
const chunked = (text: string, size: number): Stream.Stream<string> =>
  Stream.fromIterable(
    Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))
  )

// Imported the way the CLI imports a file: read as a stream, submissions in small batches, so every test also
// runs an import across many batches. Text that is not JSON would be a bug of the suite.
const importDocument = (document: unknown) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const entries = FixtureReader.fromText(chunked(JSON.stringify(document), 4096), { batchSize: 100 }).pipe(
      Stream.catchTag("FixtureMalformed", Stream.die)
    )
    return yield* store.importFixture(entries)
  })

// A decoded fixture, as the demo and embedders hand one over.
const importDecoded = (document: unknown) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    return yield* store.importFixture(yield* Effect.orDie(FixtureDocument.decode(document)))
  })

// Appended the way the CLI appends a file, as `importDocument` imports one.
const appendDocument = (document: unknown) =>
  Effect.flatMap(OperatorStore.OperatorStore, (store) =>
    store.appendSubmissions(
      Stream.catchTag(
        AppendReader.fromText(chunked(JSON.stringify(document), 4096), { batchSize: 100 }),
        "FixtureMalformed",
        Stream.die
      )
    )
  )

const file = (fields: {
  readonly id: string
  readonly userId: string
  readonly submissions?: ReadonlyArray<{ readonly createdDate: string; readonly content: unknown }>
}) => ({ name: `File ${fields.id}`, creationDate: "2024-01-01T00:00:00.000Z", ...fields })

const submissionsEverySecond = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    content: { index: String(i) }
  }))

const readSubmissions = (id: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) =>
    Stream.runCollect(FileRepository.submissions(files, fileId(id)))
  ).pipe(Effect.map(Chunk.toReadonlyArray))

// The file as a request with the active key `key` finds it: any user's key finds any user's file.
const findFile = (key: string, id: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) =>
    Effect.map(files.findAccess(apiKey(key), fileId(id)), (access) => access.file)
  )

/**
 * What the ports show of the given ids: how many of the users exist and how many files they own, every key,
 * every submission of the files.
 */
const census = (ids: { readonly users: ReadonlyArray<string>; readonly files: ReadonlyArray<string> }) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const users = yield* Effect.filter(ids.users, (id) => store.userExists(userId(id)))
    const owned = (yield* store.listUsers).filter((user) => ids.users.includes(user.id))
    const submissions = yield* Effect.forEach(ids.files, (id) => Effect.map(readSubmissions(id), (rows) => rows.length))
    return {
      users: users.length,
      apiKeys: (yield* store.listKeys(Option.none())).length,
      files: owned.reduce((sum, user) => sum + user.files, 0),
      submissions: submissions.reduce((sum, n) => sum + n, 0)
    }
  })

const issuesOf = (error: unknown) =>
  error instanceof Fixture.FixtureInvalid
    ? error.issues.map((issue) => ({ path: issue.path, detail: issue.detail }))
    : error

const existing = {
  users: [{ id: "u-old", apiKeys: ["old-key"] }],
  files: [file({ id: "f-old", userId: "u-old", submissions: submissionsEverySecond(2) })]
}

const MIN_INSTANT = "0000-01-01T00:00:00.000Z"
const MAX_INSTANT = "9999-12-31T23:59:59.999Z"

// Few distinct instants, so tie groups are long and page boundaries fall inside them.
const INSTANTS = [
  MIN_INSTANT,
  "1969-12-31T23:59:59.999Z",
  "2024-01-01T00:00:00.000Z",
  "2024-01-01T00:00:00.001Z",
  MAX_INSTANT
]
// Window bounds on those instants and between them.
const BOUNDS = [
  ...INSTANTS.map((instant) => Date.parse(instant)),
  Date.parse("1900-01-01T00:00:00.000Z"),
  Date.parse("2024-01-01T00:00:00.002Z")
]

const at = (millis: number): FileData.Timestamp => FileData.timestampFromEpochMillis(millis)
const JAN_1 = Date.UTC(2024, 0, 1)

/** The pages of a read of `range`, each continuing after the last, until one says no more match. */
const pagesOf = (id: string, range: FileRepository.SubmissionRange) =>
  Effect.gen(function* () {
    const files = yield* FileRepository.FileRepository
    const pages: Array<FileRepository.SubmissionPage> = []
    let after = range.after
    for (;;) {
      const page = yield* files.readSubmissions(fileId(id), { ...range, after })
      pages.push(page)
      if (!page.hasMore) return pages
      if (pages.length > 1000) throw new Error("a read that never ends")
      after = page.next
    }
  })

/** The joined pages of a read of `range`, each continuing after the last, until one says no more match. */
const joinedPagesOf = (id: string, range: FileRepository.SubmissionRange) =>
  Effect.gen(function* () {
    const readJoined = FileRepository.readJoined(yield* FileRepository.FileRepository)
    const pages: Array<FileRepository.JoinedPage> = []
    let after = range.after
    for (;;) {
      const page = yield* readJoined(fileId(id), { ...range, after })
      pages.push(page)
      if (!page.hasMore) return pages
      if (pages.length > 1000) throw new Error("a read that never ends")
      after = page.next
    }
  })

const parsed = (pages: ReadonlyArray<FileRepository.SubmissionPage>): ReadonlyArray<FileData.StoredSubmission> =>
  pages.flatMap((page) => page.entries.map(SubmissionEntry.parse))

/** Submissions as the port hands them back, in reply order (a stable sort keeps ties in insertion order). */
const stored = (submissions: ReadonlyArray<NewSubmission>): ReadonlyArray<FileData.StoredSubmission> =>
  [...submissions]
    .sort((a, b) => Date.parse(a.createdDate) - Date.parse(b.createdDate))
    .map((row) => ({ createdDate: at(Date.parse(row.createdDate)), contentJson: JSON.stringify(row.content) }))

/** Full pages of `size`, then what is left; no empty page after a full one, one empty page for nothing. */
const pageSizes = (count: number, size: number): ReadonlyArray<number> =>
  count === 0 ? [0] : Array.from({ length: Math.ceil(count / size) }, (_, i) => Math.min(size, count - i * size))

const everyAdmitted: RateLimiter.RateLimiter = {
  policy: {
    apiKey: { limit: Number.MAX_SAFE_INTEGER, windowMillis: 60_000 },
    clientAddress: { limit: Number.MAX_SAFE_INTEGER, windowMillis: 60_000 }
  },
  consume: (subject) =>
    Effect.succeed({
      scope: subject.scope,
      limit: Number.MAX_SAFE_INTEGER,
      windowMillis: 60_000,
      remaining: Number.MAX_SAFE_INTEGER,
      resetMillis: 60_000
    })
}

/** Appends submissions to a file through the operator port, as `pnpm filedata append` does. */
const appendTo = (id: string, submissions: ReadonlyArray<NewSubmission>) =>
  Effect.asVoid(Effect.orDie(appendDocument({ files: [{ id, submissions }] })))

const decoder = new TextDecoder()

/** A joined page with its bytes as text, to compare whatever kind of `Uint8Array` an adapter hands out. */
const asText = (page: FileRepository.JoinedPage) => ({ ...page, joined: FileRepository.joinedText(page) })

/** The whole reply of `GetFileData` for the file, written through `write` as a transport would. */
const fileDataReply = <R>(
  id: string,
  apiKey: string,
  write: (piece: string | Uint8Array) => Effect.Effect<void, never, R>
) =>
  Effect.gen(function* () {
    const files = yield* FileRepository.FileRepository
    const reply = yield* GetFileData.runWith(
      { files, limiter: everyAdmitted },
      { clientAddress: "192.0.2.1", body: Effect.succeed({ fileId: id, apiKey }) }
    )
    const pieces: Array<string> = []
    yield* FileDataJson.writeTo(reply, (piece) =>
      Effect.zipRight(
        Effect.sync(() => pieces.push(typeof piece === "string" ? piece : decoder.decode(piece))),
        write(piece)
      )
    )
    return JSON.parse(pieces.join("")) as FileData.FileData
  })

/**
 * Registers the suite under `name`. Tests that look at page boundaries ask for small pages.
 *
 * @since 0.1.0
 * @category suites
 */
export const suite = (name: string, makeStorage: MakeStorage): void => {
  const withStorage =
    (pageSize = 1000) =>
    <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.provide(self, makeStorage({ pageSize }))

  // Each test builds and migrates a store of its own and imports through it: on a busy machine that outlasts
  // vitest's default 5 s, so an adapter author's run does not depend on the machine's load.
  describe(name, { timeout: 60_000 }, () => {
    describe("FileRepository", () => {
      it.effect("answers the owner of an active key with the file, and neither for an unknown or revoked key", () =>
        Effect.gen(function* () {
          const files = yield* FileRepository.FileRepository
          const store = yield* OperatorStore.OperatorStore
          yield* importDocument({
            users: [{ id: "u1", apiKeys: ["key-one", "ключ 🔑"] }, { id: "u2" }],
            files: [file({ id: "f1", userId: "u1" })]
          })
          const access = (key: string, id = "f1") =>
            Effect.map(files.findAccess(apiKey(key), fileId(id)), ({ owner, file }) => [
              owner,
              Option.map(file, (found) => found.id)
            ])
          expect(yield* access("key-one")).toEqual([Option.some("u1"), Option.some("f1")])
          expect(yield* access("ключ 🔑")).toEqual([Option.some("u1"), Option.some("f1")])
          // An unknown key learns nothing of the file, not even whether it exists.
          for (const unknown of ["KEY-ONE", "key-one ", "key-two", "key-one\u0001"]) {
            expect(yield* access(unknown)).toEqual([Option.none(), Option.none()])
            expect(yield* access(unknown, "missing")).toEqual([Option.none(), Option.none()])
          }
          const created = yield* store.createKey(userId("u2"), apiKey("key-three"))
          expect(yield* access("key-three")).toEqual([Option.some("u2"), Option.some("f1")])
          yield* store.revokeKey(created.id)
          expect(yield* access("key-three")).toEqual([Option.none(), Option.none()])
          expect(yield* access("key-one")).toEqual([Option.some("u1"), Option.some("f1")])
        }).pipe(withStorage())
      )

      it.effect("finds a file with its metadata and counters, and nothing for an unknown id", () =>
        Effect.gen(function* () {
          const files = yield* FileRepository.FileRepository
          yield* importDocument({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [
              {
                id: "f1",
                userId: "u1",
                name: "Contact form ✉️",
                creationDate: "2024-03-10T12:34:56.789+02:00",
                publicAvailability: true,
                SubmissionCounter: Number.MAX_SAFE_INTEGER,
                VisitCounter: 42
              },
              { id: "f2", userId: "u1", name: "", creationDate: "2024-01-01T00:00:00+05:30" }
            ]
          })
          expect(yield* files.findAccess(apiKey("k1"), fileId("f1"))).toEqual({
            owner: Option.some("u1"),
            file: Option.some({
              id: "f1",
              ownerId: "u1",
              name: "Contact form ✉️",
              creationDate: "2024-03-10T10:34:56.789Z",
              publicAvailability: true,
              SubmissionCounter: Number.MAX_SAFE_INTEGER,
              VisitCounter: 42,
              readPoint: "0"
            })
          })
          expect(yield* files.findAccess(apiKey("k1"), fileId("f2"))).toEqual({
            owner: Option.some("u1"),
            file: Option.some({
              id: "f2",
              ownerId: "u1",
              name: "",
              creationDate: "2023-12-31T18:30:00.000Z",
              publicAvailability: false,
              SubmissionCounter: 0,
              VisitCounter: 0,
              readPoint: "0"
            })
          })
          for (const unknown of ["missing", "F1", "f1 ", "f1\u0001"]) {
            expect(yield* files.findAccess(apiKey("k1"), fileId(unknown))).toEqual({
              owner: Option.some("u1"),
              file: Option.none()
            })
            expect(yield* readSubmissions(unknown)).toEqual([])
          }
          expect(yield* readSubmissions("f2")).toEqual([])
          yield* files.ping
        }).pipe(withStorage())
      )

      it.effect("finds another user's file through an active key: who may read it is the core's rule", () =>
        Effect.gen(function* () {
          const files = yield* FileRepository.FileRepository
          yield* importDocument({
            users: [
              { id: "u1", apiKeys: ["k1"] },
              { id: "u2", apiKeys: ["k2"] }
            ],
            files: [file({ id: "f1", userId: "u1" }), file({ id: "f2", userId: "u2" })]
          })
          const access = (key: string, id: string) =>
            Effect.map(files.findAccess(apiKey(key), fileId(id)), ({ owner, file }) => [
              owner,
              Option.map(file, (found) => found.ownerId)
            ])
          expect(yield* access("k1", "f2")).toEqual([Option.some("u1"), Option.some("u2")])
          expect(yield* access("k2", "f1")).toEqual([Option.some("u2"), Option.some("u1")])
          expect(yield* access("k2", "f2")).toEqual([Option.some("u2"), Option.some("u2")])
        }).pipe(withStorage())
      )

      it.effect("returns content as the exact JSON text imported: odd keys, key order, escapes, unicode", () =>
        Effect.gen(function* () {
          const texts = [
            "{}",
            '{"zeta":"1","__proto__":"polluted?","":"empty key","constructor":"x","a":""}',
            '{"ключ":"значение 😀","emoji 👩‍👩‍👧":"\\u0001 control, \\u001f unit separator","tab\\t":"\\"quoted\\"\\n\\\\"}',
            JSON.stringify(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${49 - i}`, "v".repeat(i * 40)])))
          ]
          yield* importDocument({
            users: [{ id: "u1" }],
            files: [
              file({
                id: "f1",
                userId: "u1",
                submissions: texts.map((text, i) => ({
                  createdDate: `2024-01-02T09:30:0${i}.000Z`,
                  content: JSON.parse(text)
                }))
              })
            ]
          })
          const rows = yield* readSubmissions("f1")
          expect(rows.map((row) => row.contentJson)).toEqual(texts)
          expect(Object.keys(JSON.parse(rows[1]?.contentJson ?? "{}"))).toEqual([
            "zeta",
            "__proto__",
            "",
            "constructor",
            "a"
          ])
        }).pipe(withStorage())
      )

      it.effect("keeps instants in UTC to the millisecond, from 0000-01-01 to 9999-12-31T23:59:59.999Z", () =>
        Effect.gen(function* () {
          const given = [
            MAX_INSTANT,
            "1970-01-01T00:00:00.000Z",
            "1969-12-31T23:59:59.999Z",
            MIN_INSTANT,
            "2024-02-29T23:59:59.999+01:00",
            "2024-06-01T09:00:00.5+02:00",
            "2024-06-01T07:00:00.001Z",
            "0000-01-01T00:00:00.001Z",
            "9999-12-31T23:59:59.998Z"
          ]
          yield* importDocument({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [
              { id: "f-min", userId: "u1", name: "min", creationDate: MIN_INSTANT },
              { id: "f-max", userId: "u1", name: "max", creationDate: MAX_INSTANT },
              file({
                id: "f1",
                userId: "u1",
                submissions: given.map((createdDate, i) => ({ createdDate, content: { i: String(i) } }))
              })
            ]
          })
          const creation = (id: string) =>
            Effect.map(
              findFile("k1", id),
              Option.map((found) => found.creationDate)
            )
          expect(yield* creation("f-min")).toEqual(Option.some(MIN_INSTANT))
          expect(yield* creation("f-max")).toEqual(Option.some(MAX_INSTANT))
          expect((yield* readSubmissions("f1")).map((row) => row.createdDate)).toEqual([
            MIN_INSTANT,
            "0000-01-01T00:00:00.001Z",
            "1969-12-31T23:59:59.999Z",
            "1970-01-01T00:00:00.000Z",
            "2024-02-29T22:59:59.999Z",
            "2024-06-01T07:00:00.001Z",
            "2024-06-01T07:00:00.500Z",
            "9999-12-31T23:59:59.998Z",
            MAX_INSTANT
          ])
        }).pipe(withStorage())
      )

      it.effect.prop(
        "streams every submission of the file, ascending by createdDate, ties in insertion order, in bounded pages",
        {
          pageSize: FastCheck.integer({ min: 1, max: 4 }),
          rows: FastCheck.array(
            FastCheck.record({
              file: FastCheck.constantFrom("f1", "f2"),
              // Few distinct instants, so tie groups are long and page boundaries fall inside them.
              createdDate: FastCheck.constantFrom(
                MIN_INSTANT,
                "1969-12-31T23:59:59.999Z",
                "2024-01-01T00:00:00.000Z",
                "2024-01-01T00:00:00.001Z",
                MAX_INSTANT
              ),
              content: FastCheck.dictionary(FastCheck.string(), FastCheck.string(), { maxKeys: 3 })
            }),
            { maxLength: 30 }
          )
        },
        ({ pageSize, rows }) =>
          Effect.gen(function* () {
            const submissionsOf = (id: string) =>
              rows.filter((row) => row.file === id).map(({ content, createdDate }) => ({ createdDate, content }))
            yield* importDocument({
              users: [{ id: "u1" }],
              files: [
                file({ id: "f1", userId: "u1", submissions: submissionsOf("f1") }),
                file({ id: "f2", userId: "u1", submissions: submissionsOf("f2") })
              ]
            })
            const files = yield* FileRepository.FileRepository
            const expected = (id: string) =>
              // Array.prototype.sort is stable, so ties keep document order.
              submissionsOf(id)
                .sort((a, b) => Date.parse(a.createdDate) - Date.parse(b.createdDate))
                .map((row) => ({ createdDate: row.createdDate, contentJson: JSON.stringify(row.content) }))
            for (const id of ["f1", "f2"]) {
              const chunks = Chunk.toReadonlyArray(
                yield* Stream.runCollect(Stream.chunks(FileRepository.submissions(files, fileId(id))))
              )
              expect(chunks.every((chunk) => Chunk.size(chunk) <= pageSize)).toBe(true)
              expect(chunks.flatMap(Chunk.toReadonlyArray)).toEqual(expected(id))
              // A stream is a description: running it again reads the same rows again.
              expect(yield* readSubmissions(id)).toEqual(expected(id))
            }
          }).pipe(withStorage(pageSize)),
        { fastCheck: { numRuns: 25 } }
      )
    })

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
          yield* importDocument({
            users: limitIds.map((id, i) => ({ id, apiKeys: [`key-${i}`] })),
            files: limitIds.map((id) => file({ id, userId: id, submissions: submissionsEverySecond(2) }))
          })
          for (const [i, id] of limitIds.entries()) {
            const { owner, file: found } = yield* files.findAccess(apiKey(`key-${i}`), fileId(id))
            expect(owner).toEqual(Option.some(id))
            expect(Option.map(found, (f) => [f.id, f.ownerId])).toEqual(Option.some([id, id]))
            expect(yield* readSubmissions(id)).toHaveLength(2)
            expect(yield* store.userExists(userId(id))).toBe(true)
            expect((yield* store.listKeys(Option.some(userId(id)))).map((key) => key.userId)).toEqual([id])
          }
          const created = yield* store.createKey(userId(limitIds[2] as string), apiKey("created"))
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
          yield* importDocument({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: texts.map((name, i) => ({
              ...file({
                id: `f${i}`,
                userId: "u1",
                submissions: [{ createdDate: "2024-01-02T00:00:00.000Z", content }]
              }),
              name
            }))
          })
          for (const [i, name] of texts.entries()) {
            const found = yield* findFile("k1", `f${i}`)
            const stored = Option.getOrThrow(Option.map(found, (f) => f.name))
            expect(Buffer.from(stored, "utf8").equals(Buffer.from(name, "utf8"))).toBe(true)
            const rows = yield* readSubmissions(`f${i}`)
            expect(rows.map((row) => row.contentJson)).toEqual([JSON.stringify(content)])
          }
        }).pipe(withStorage())
      )

      it.effect("takes ids as given, never normalised: composed and decomposed é are two files", () =>
        Effect.gen(function* () {
          const composed = "caf\u00e9"
          const decomposed = "cafe\u0301"
          yield* importDocument({
            users: [{ id: composed, apiKeys: ["k1"] }, { id: decomposed }],
            files: [file({ id: composed, userId: composed }), file({ id: decomposed, userId: decomposed })]
          })
          expect(Option.map(yield* findFile("k1", composed), (f) => f.ownerId)).toEqual(Option.some(composed))
          expect(Option.map(yield* findFile("k1", decomposed), (f) => f.ownerId)).toEqual(Option.some(decomposed))
        }).pipe(withStorage())
      )

      it.effect("refuses by path what breaks the rules, and writes nothing of the fixture", () =>
        Effect.gen(function* () {
          const document = {
            users: [{ id: "u\u0000" }, { id: "u-ok", apiKeys: ["k\ud800"] }],
            files: [
              file({ id: "x".repeat(longest + 1), userId: "u-ok" }),
              file({ id: "😀".repeat(longest + 1), userId: "u-ok" }),
              {
                ...file({
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
          expect(byPath(issuesOf(yield* Effect.flip(importDocument(document))))).toEqual(byPath(expected))
          expect(byPath(issuesOf(yield* Effect.flip(FixtureDocument.decode(document))))).toEqual(byPath(expected))
          const left = yield* census({ users: ["u-ok"], files: ["f-ok"] })
          expect(left).toEqual({ users: 0, apiKeys: 0, files: 0, submissions: 0 })
        }).pipe(withStorage())
      )

      it.effect("appends to files of the longest ids, texts kept byte for byte, under the same rules", () =>
        Effect.gen(function* () {
          const content = Object.fromEntries(texts.map((text, i) => [`${text} ${i}`, text]))
          const at = "2024-01-02T00:00:00.000Z"
          yield* importDocument({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [...limitIds, "f-ok"].map((id) => file({ id, userId: "u1" }))
          })
          expect(
            yield* appendDocument({
              files: limitIds.map((id) => ({ id, submissions: [{ createdDate: at, content }], VisitCounter: 1 }))
            })
          ).toEqual({ files: limitIds.length, submissions: limitIds.length })
          for (const id of limitIds) {
            expect((yield* readSubmissions(id)).map((row) => row.contentJson)).toEqual([JSON.stringify(content)])
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
          expect(byPath(issuesOf(yield* Effect.flip(appendDocument(document))))).toEqual(byPath(expected))
          expect(byPath(issuesOf(yield* Effect.flip(AppendDocument.decode(document))))).toEqual(byPath(expected))
          const counters = (id: string) =>
            Effect.map(
              findFile("k1", id),
              Option.map((f) => [f.SubmissionCounter, f.VisitCounter])
            )
          expect(yield* counters("f-ok")).toEqual(Option.some([0, 0]))
          expect(yield* counters(limitIds[0] as string)).toEqual(Option.some([1, 1]))
          expect(yield* readSubmissions("f-ok")).toEqual([])
          expect(yield* readSubmissions(limitIds[0] as string)).toHaveLength(1)
        }).pipe(withStorage())
      )
    })

    describe("FileRepository: ranges", () => {
      const users = [{ id: "u1", apiKeys: ["k1"] }]
      // Three submissions a second, so every page of a few holds ties and some pages break inside them.
      const tied = (count: number, tag = "") =>
        Array.from({ length: count }, (_, i) => ({
          createdDate: at(JAN_1 + Math.floor(i / 3) * 1000),
          content: { i: `${tag}${i}` }
        }))

      // Rows of two files on few instants, so windows and pages fall on ties.
      type WindowRow = { readonly file: string; readonly createdDate: string; readonly content: Record<string, string> }
      const windowRows: FastCheck.Arbitrary<Array<WindowRow>> = FastCheck.array(
        FastCheck.record({
          file: FastCheck.constantFrom("f1", "f2"),
          createdDate: FastCheck.constantFrom(...INSTANTS),
          content: FastCheck.dictionary(FastCheck.string(), FastCheck.string(), { maxKeys: 2 })
        }),
        { maxLength: 24 }
      )
      // A read of a window of those rows in small pages: bounds on the rows' own instants and between them.
      const windowRead = {
        limit: FastCheck.option(FastCheck.integer({ min: 1, max: 4 }), { nil: undefined }),
        since: FastCheck.option(FastCheck.constantFrom(...BOUNDS), { nil: undefined }),
        until: FastCheck.option(FastCheck.constantFrom(...BOUNDS), { nil: undefined }),
        rows: windowRows
      }
      // Imports the rows into f1 and f2 of u1; gives each file's submissions as imported.
      const importRows = (rows: ReadonlyArray<WindowRow>) =>
        Effect.gen(function* () {
          const submissionsOf = (id: string) =>
            rows.filter((row) => row.file === id).map(({ content, createdDate }) => ({ createdDate, content }))
          yield* importDocument({
            users,
            files: [
              file({ id: "f1", userId: "u1", submissions: submissionsOf("f1") }),
              file({ id: "f2", userId: "u1", submissions: submissionsOf("f2") })
            ]
          })
          return submissionsOf
        })

      it.effect("pages through a file with any limit: full pages but the last, hasMore exactly when more follow", () =>
        Effect.gen(function* () {
          yield* importDocument({
            users,
            files: [
              file({ id: "f0", userId: "u1" }),
              file({ id: "f6", userId: "u1", submissions: tied(6) }),
              file({ id: "f7", userId: "u1", submissions: tied(7) })
            ]
          })
          for (const [id, count] of [
            ["f0", 0],
            ["f6", 6],
            ["f7", 7]
          ] as const) {
            for (const limit of [1, 2, undefined, 10_000]) {
              const pages = yield* pagesOf(id, { limit })
              expect(pages.map((page) => page.entries.length)).toEqual(pageSizes(count, limit ?? 3))
              expect(pages.map((page) => page.hasMore)).toEqual(pages.map((_, i) => i < pages.length - 1))
              expect(parsed(pages)).toEqual(stored(tied(count)))
            }
          }
        }).pipe(withStorage(3))
      )

      it.effect.prop(
        "reads the window since <= createdDate < until in bounded pages, ties in insertion order, nothing twice",
        {
          ...windowRead
        },
        ({ limit, rows, since, until }) =>
          Effect.gen(function* () {
            const submissionsOf = yield* importRows(rows)
            const inWindow = (row: NewSubmission) =>
              (since === undefined || Date.parse(row.createdDate) >= since) &&
              (until === undefined || Date.parse(row.createdDate) < until)
            for (const id of ["f1", "f2"]) {
              const expected = stored(submissionsOf(id).filter(inWindow))
              const pages = yield* pagesOf(id, { since, until, limit })
              expect(parsed(pages)).toEqual(expected)
              expect(pages.map((page) => page.entries.length)).toEqual(pageSizes(expected.length, limit ?? 3))
              expect(pages.map((page) => page.hasMore)).toEqual(pages.map((_, i) => i < pages.length - 1))
              // Where the read ended, the window holds nothing more.
              const files = yield* FileRepository.FileRepository
              const last = pages[pages.length - 1] as FileRepository.SubmissionPage
              const beyond = yield* files.readSubmissions(fileId(id), { since, until, limit, after: last.next })
              expect(beyond).toEqual({ entries: [], next: last.next, hasMore: false })
            }
          }).pipe(withStorage(3)),
        { fastCheck: { numRuns: 25 } }
      )

      it.effect("a bound on a createdDate: since takes it in, until leaves it out; empty windows are empty", () =>
        Effect.gen(function* () {
          const t = (second: number) => JAN_1 + second * 1000
          const rows = [
            { createdDate: at(t(1)), content: { n: "1" } },
            { createdDate: at(t(2)), content: { n: "2a" } },
            { createdDate: at(t(2)), content: { n: "2b" } },
            { createdDate: at(t(3)), content: { n: "3" } }
          ]
          yield* importDocument({ users, files: [file({ id: "f1", userId: "u1", submissions: rows })] })
          const read = (range: FileRepository.SubmissionRange) =>
            Effect.map(pagesOf("f1", range), (pages) => parsed(pages).map((row) => JSON.parse(row.contentJson).n))
          expect(yield* read({ since: t(2) })).toEqual(["2a", "2b", "3"])
          expect(yield* read({ until: t(2) })).toEqual(["1"])
          expect(yield* read({ since: t(2), until: t(3) })).toEqual(["2a", "2b"])
          expect(yield* read({ since: t(2), until: t(3), limit: 1 })).toEqual(["2a", "2b"])
          expect(yield* read({ since: t(2) + 1, until: t(3) + 1 })).toEqual(["3"])
          for (const empty of [
            { since: t(2), until: t(2) },
            { until: t(1) },
            { since: t(3) + 1 },
            { since: t(3), until: t(1) }
          ]) {
            expect(yield* read(empty)).toEqual([])
          }
        }).pipe(withStorage(3))
      )

      it.effect("an empty page's next is where its range started; what is appended later follows it", () =>
        Effect.gen(function* () {
          const files = yield* FileRepository.FileRepository
          yield* importDocument({
            users,
            files: [file({ id: "f0", userId: "u1" }), file({ id: "f1", userId: "u1", submissions: tied(4) })]
          })
          // An empty file, read from its start and from what the first read handed out.
          const empty = yield* files.readSubmissions(fileId("f0"), {})
          expect(empty).toMatchObject({ entries: [], hasMore: false })
          expect(yield* files.readSubmissions(fileId("f0"), { after: empty.next })).toEqual(empty)
          // A window that holds nothing yet starts where the window does.
          const since = JAN_1 + 60_000
          const quiet = yield* files.readSubmissions(fileId("f1"), { since })
          expect(quiet).toMatchObject({ entries: [], hasMore: false })
          expect(yield* files.readSubmissions(fileId("f1"), { since, after: quiet.next })).toEqual(quiet)
          // With an `after`, an empty page hands that position back as it was given.
          const [first] = yield* pagesOf("f1", { limit: 1 })
          const after = (first as FileRepository.SubmissionPage).next
          expect(yield* files.readSubmissions(fileId("f1"), { after, until: JAN_1 })).toEqual({
            entries: [],
            next: after,
            hasMore: false
          })

          const later = [
            { createdDate: at(since + 5), content: { n: "later" } },
            { createdDate: at(since), content: { n: "on the bound" } }
          ]
          yield* appendTo("f0", later)
          yield* appendTo("f1", later)
          expect(parsed(yield* pagesOf("f0", { after: empty.next }))).toEqual(stored(later))
          expect(parsed(yield* pagesOf("f1", { since, after: quiet.next }))).toEqual(stored(later))
        }).pipe(withStorage(3))
      )

      it.effect("a read that asks for no end position reads the same pages; only the last may leave its next out", () =>
        Effect.gen(function* () {
          const submissions = tied(7)
          yield* importDocument({
            users,
            files: [file({ id: "f0", userId: "u1" }), file({ id: "f1", userId: "u1", submissions })]
          })
          for (const limit of [undefined, 1, 2, 3, 7, 8]) {
            const asked = yield* pagesOf("f1", { limit })
            const unasked = yield* pagesOf("f1", { limit, endPosition: false })
            expect(parsed(unasked)).toEqual(stored(submissions))
            expect(unasked.map((page) => page.hasMore)).toEqual(asked.map((page) => page.hasMore))
            for (const [index, page] of unasked.entries()) {
              const same = asked[index] as FileRepository.SubmissionPage
              expect(page.entries).toEqual(same.entries)
              // Where a page is followed by another, its next is given and the same as when asked for.
              if (page.next !== undefined || page.hasMore) expect(page.next).toEqual(same.next)
            }
            // Asked for, the last page's next is always given.
            expect(asked.every((page) => typeof page.next === "string")).toBe(true)
          }
          const files = yield* FileRepository.FileRepository
          const empty = yield* files.readSubmissions(fileId("f0"), { endPosition: false })
          expect(empty).toMatchObject({ entries: [], hasMore: false })
        }).pipe(withStorage(3))
      )

      it.effect.prop(
        "a joined page is the same page's entries joined, with the same count, next and hasMore",
        {
          ...windowRead,
          endPosition: FastCheck.option(FastCheck.boolean(), { nil: undefined })
        },
        ({ endPosition, limit, rows, since, until }) =>
          Effect.gen(function* () {
            yield* importRows(rows)
            const files = yield* FileRepository.FileRepository
            const readJoined = FileRepository.readJoined(files)
            for (const id of ["f1", "f2", "f3"]) {
              const range = { since, until, limit, endPosition }
              const pages = yield* pagesOf(id, range)
              if (limit === undefined) {
                // Without a limit, joined pages may be longer, so their boundaries differ: the same entries in
                // the same order, the same end.
                const joined = yield* joinedPagesOf(id, range)
                const text = (texts: ReadonlyArray<string>) => texts.filter((one) => one !== "").join(",")
                expect(text(joined.map(FileRepository.joinedText))).toEqual(
                  text(pages.map((page) => page.entries.join(",")))
                )
                expect(joined.reduce((sum, page) => sum + page.count, 0)).toBe(parsed(pages).length)
                expect(joined.map((page) => page.hasMore)).toEqual(joined.map((_, i) => i < joined.length - 1))
                continue
              }
              // Each page again, joined, from where its read started; and past the last one, when it says where.
              for (const [index, page] of pages.entries()) {
                const after = index === 0 ? undefined : pages[index - 1]?.next
                expect(asText(yield* readJoined(fileId(id), { ...range, after }))).toEqual(
                  asText(FileRepository.join(page))
                )
              }
              const after = pages[pages.length - 1]?.next
              if (after !== undefined) {
                expect(asText(yield* readJoined(fileId(id), { ...range, after }))).toEqual(
                  asText(FileRepository.join(yield* files.readSubmissions(fileId(id), { ...range, after })))
                )
              }
            }
            expect(asText(yield* readJoined(fileId("f1"), { after: "made-up" }))).toEqual(
              asText(FileRepository.join(yield* files.readSubmissions(fileId("f1"), { after: "made-up" })))
            )
          }).pipe(withStorage(3)),
        { fastCheck: { numRuns: 25 } }
      )

      it.effect("a file read in joined pages ends each page exactly, ties at a page's end or not", () =>
        Effect.gen(function* () {
          // Distinct instants but for two ties. Pages of 3 then 12 (SQLite's joined pages with pages of 3 rows) end
          // at the 15th submission, inside a tie; at the 27th, alone at its instant; at the 39th, the end of a tie.
          const seconds = [
            ...Array.from({ length: 15 }, (_, i) => i),
            14,
            ...Array.from({ length: 8 }, (_, i) => 16 + i),
            25,
            26,
            27,
            ...Array.from({ length: 10 }, (_, i) => 28 + i),
            38,
            38
          ]
          const submissions = seconds.map((second, i) => ({
            createdDate: at(JAN_1 + second * 1000),
            content: { i: String(i) }
          }))
          yield* importDocument({ users, files: [file({ id: "f1", userId: "u1", submissions })] })
          const found = Option.getOrThrow(yield* findFile("k1", "f1"))
          for (const endPosition of [false, undefined]) {
            const pages = yield* joinedPagesOf("f1", { upTo: found.readPoint, endPosition })
            expect(pages.map((page) => page.hasMore)).toEqual(pages.map((_, i) => i < pages.length - 1))
            expect(
              JSON.parse(
                `[${pages
                  .map(FileRepository.joinedText)
                  .filter((text) => text !== "")
                  .join(",")}]`
              )
            ).toEqual(
              stored(submissions).map((row) => ({ createdDate: row.createdDate, content: JSON.parse(row.contentJson) }))
            )
            // Each page's next is the position of its last submission: reading on from it gives the rest.
            let read = 0
            for (const page of pages.slice(0, -1)) {
              read += page.count
              const rest = yield* pagesOf("f1", { after: page.next, upTo: found.readPoint })
              expect(parsed(rest)).toEqual(stored(submissions).slice(read))
            }
          }
        }).pipe(withStorage(3))
      )

      it.effect("joins a page in reply order, however the rows were inserted", () =>
        Effect.gen(function* () {
          // Inserted in an order unlike the reply's, with ties, over several full pages.
          const submissions = Array.from({ length: 600 }, (_, i) => ({
            createdDate: at(JAN_1 + ((i * 37) % 101) * 1000),
            content: { i: String(i) }
          }))
          yield* importDocument({ users, files: [file({ id: "f1", userId: "u1", submissions })] })
          const files = yield* FileRepository.FileRepository
          const readJoined = FileRepository.readJoined(files)
          const found = Option.getOrThrow(yield* findFile("k1", "f1"))
          const texts: Array<string> = []
          let after: string | undefined
          for (;;) {
            const page = yield* readJoined(fileId("f1"), { after, upTo: found.readPoint, endPosition: false })
            if (page.count > 0) texts.push(FileRepository.joinedText(page))
            if (!page.hasMore) break
            after = page.next
          }
          // Pages after the first too, which an adapter may join differently.
          expect(texts.length).toBeGreaterThanOrEqual(3)
          expect(JSON.parse(`[${texts.join(",")}]`)).toEqual(
            stored(submissions).map((row) => ({ createdDate: row.createdDate, content: JSON.parse(row.contentJson) }))
          )
        }).pipe(withStorage(100))
      )

      it.effect("a sync continues after its last next with what was appended at or after that createdDate", () =>
        Effect.gen(function* () {
          const before = tied(7)
          yield* importDocument({ users, files: [file({ id: "f1", userId: "u1", submissions: before })] })
          const synced = yield* pagesOf("f1", { limit: 2 })
          expect(parsed(synced)).toEqual(stored(before))
          const last = Date.parse((before[6] as NewSubmission).createdDate)
          yield* appendTo("f1", [
            { createdDate: at(last + 1000), content: { i: "later" } },
            // Before the cursor: a sync that went past it does not see it again.
            { createdDate: at(last - 1), content: { i: "earlier" } },
            { createdDate: at(last), content: { i: "tied with the last" } },
            { createdDate: at(last + 1), content: { i: "just after" } }
          ])
          const next = (synced[synced.length - 1] as FileRepository.SubmissionPage).next
          const resumed = yield* pagesOf("f1", { limit: 2, after: next })
          expect(parsed(resumed).map((row) => JSON.parse(row.contentJson).i)).toEqual([
            "tied with the last",
            "just after",
            "later"
          ])
          expect(resumed.map((page) => page.hasMore)).toEqual([true, false])
        }).pipe(withStorage(3))
      )

      it.effect("a position of another file's range reads this file's submissions only, and a made-up one none", () =>
        Effect.gen(function* () {
          const files = yield* FileRepository.FileRepository
          // Interleaved instants, so the other file's positions fall among this file's submissions.
          const mine = tied(9, "mine-")
          const theirs = Array.from({ length: 9 }, (_, i) => ({
            createdDate: at(JAN_1 + i * 500),
            content: { i: `theirs-${i}` }
          }))
          yield* importDocument({
            users,
            files: [
              file({ id: "mine", userId: "u1", submissions: mine }),
              file({ id: "theirs", userId: "u1", submissions: theirs })
            ]
          })
          const expected = stored(mine)
          for (const page of yield* pagesOf("theirs", { limit: 1 })) {
            const read = parsed(yield* pagesOf("mine", { after: page.next }))
            expect(read).toEqual(expected.slice(expected.length - read.length))
          }
          for (const made of ["", "x", "1", "1:2:3", "-0:1", "01:1", "1:01", " 1:1", "1e3:1", "1:-1", "1:1.5"]) {
            expect(yield* files.readSubmissions(fileId("mine"), { after: made })).toEqual({
              entries: [],
              next: made,
              hasMore: false
            })
          }
          for (const outOfRange of ["99999999999999999:1", "253402300800000:1", "1:9223372036854775808"]) {
            expect(yield* files.readSubmissions(fileId("mine"), { after: outOfRange })).toMatchObject({ entries: [] })
          }
        }).pipe(withStorage(3))
      )
    })

    describe("FileRepository: read points", () => {
      const users = [{ id: "u1", apiKeys: ["k1"] }]
      const before = Array.from({ length: 30 }, (_, i) => ({
        createdDate: at(JAN_1 + i * 1000),
        content: { n: String(i) }
      }))
      // Before the first, among the rest, tied with one, after the last.
      const appended = [
        { createdDate: at(JAN_1 - 1000), content: { n: "first of all" } },
        { createdDate: at(JAN_1 + 12_500), content: { n: "among" } },
        { createdDate: at(JAN_1 + 20_000), content: { n: "tied" } },
        { createdDate: at(JAN_1 + 99_000), content: { n: "last of all" } }
      ]

      it.effect("pages read up to a read point show the file as found, whatever is appended meanwhile", () =>
        Effect.gen(function* () {
          const files = yield* FileRepository.FileRepository
          yield* importDocument({ users, files: [file({ id: "f1", userId: "u1", submissions: before })] })
          const found = Option.getOrThrow(yield* findFile("k1", "f1"))
          expect(found.SubmissionCounter).toBe(30)
          const first = yield* files.readSubmissions(fileId("f1"), { upTo: found.readPoint })
          yield* appendTo("f1", appended)
          const rest = yield* pagesOf("f1", { after: first.next, upTo: found.readPoint })
          expect(parsed([first, ...rest])).toEqual(stored(before))
          // Without the read point the same pages show the append: the bound is what kept it out.
          expect(parsed([first, ...(yield* pagesOf("f1", { after: first.next }))])).toEqual([
            ...stored(before).slice(0, 3),
            ...stored([...before.slice(3), ...appended.slice(1)])
          ])

          const again = Option.getOrThrow(yield* findFile("k1", "f1"))
          expect(again.SubmissionCounter).toBe(34)
          expect(again.readPoint).not.toBe(found.readPoint)
          expect(parsed(yield* pagesOf("f1", { upTo: again.readPoint }))).toEqual(stored([...before, ...appended]))
        }).pipe(withStorage(3))
      )

      it.effect("a reply written while an append commits is the file before it; the next reply, after it", () =>
        Effect.gen(function* () {
          yield* importDocument({ users, files: [file({ id: "f1", userId: "u1", submissions: before })] })
          const expected = (counter: number, submissions: ReadonlyArray<NewSubmission>) => ({
            name: "File f1",
            creationDate: "2024-01-01T00:00:00.000Z",
            publicAvailability: false,
            SubmissionCounter: counter,
            VisitCounter: 0,
            submissions: stored(submissions).map((row) => ({
              createdDate: row.createdDate,
              content: JSON.parse(row.contentJson)
            }))
          })
          let pieces = 0
          const during = yield* fileDataReply("f1", "k1", () =>
            ++pieces === 1 ? appendTo("f1", appended) : Effect.void
          )
          // Many pages, so the append committed between pages, after the first piece went out.
          expect(pieces).toBeGreaterThan(5)
          expect(during).toEqual(expected(30, before))
          expect(yield* fileDataReply("f1", "k1", () => Effect.void)).toEqual(expected(34, [...before, ...appended]))
        }).pipe(withStorage(3))
      )
    })

    describe("FileRepository: content names", () => {
      const users = [{ id: "u1", apiKeys: ["k1"] }]
      const dated = (contents: ReadonlyArray<Record<string, string>>, from = 0) =>
        contents.map((content, i) => ({ createdDate: at(JAN_1 + (from + i) * 1000), content }))
      const namesAt = (id: string, readPoint: FileRepository.ReadPoint) =>
        Effect.flatMap(FileRepository.FileRepository, (files) => files.readContentNames(fileId(id), readPoint))
      const names = (id: string) =>
        Effect.flatMap(findFile("k1", id), (found) => namesAt(id, Option.getOrThrow(found).readPoint))

      it.effect("keeps each file's names once, in the order the file first received them, odd names exactly", () =>
        Effect.gen(function* () {
          yield* importDocument({
            users,
            files: [
              file({ id: "f2", userId: "u1", submissions: dated([{ z: "1" }, { y: "2", z: "3" }]) }),
              file({
                id: "f1",
                userId: "u1",
                // Reply order is not insertion order here: names follow insertion.
                submissions: dated(
                  [
                    { b: "1", a: "2" },
                    { c: "", a: "x" },
                    { "7": "n", "": "e" }
                  ],
                  10
                ).concat(dated([{ createdDate: "d", "a,b": "", "line\nbreak": "", "😀": "", ["__proto__"]: "" }], 0))
              }),
              file({ id: "f3", userId: "u1" })
            ]
          })
          expect(yield* names("f1")).toEqual([
            "b",
            "a",
            "c",
            "7",
            "",
            "createdDate",
            "a,b",
            "line\nbreak",
            "😀",
            "__proto__"
          ])
          expect(yield* names("f2")).toEqual(["z", "y"])
          expect(yield* names("f3")).toEqual([])
        }).pipe(withStorage(2))
      )

      it.effect("an append adds its new names after the file's, seen only from a read point after it", () =>
        Effect.gen(function* () {
          yield* importDocument({ users, files: [file({ id: "f1", userId: "u1", submissions: dated([{ a: "1" }]) })] })
          const before = Option.getOrThrow(yield* findFile("k1", "f1"))
          yield* appendTo("f1", dated([{ b: "2", a: "3" }, { c: "4" }], -5))
          expect(yield* namesAt("f1", before.readPoint)).toEqual(["a"])
          expect(yield* names("f1")).toEqual(["a", "b", "c"])
          yield* appendTo("f1", dated([{ c: "5", d: "6" }]))
          expect(yield* names("f1")).toEqual(["a", "b", "c", "d"])
        }).pipe(withStorage())
      )

      it.effect("names of an append that rolls back never appear, and the next append's follow the file's", () =>
        Effect.gen(function* () {
          yield* importDocument({
            users,
            files: [file({ id: "f1", userId: "u1", submissions: dated([{ a: "1" }]) })]
          })
          // Refused whole: a file that does not exist.
          const refused = yield* Effect.flip(
            appendDocument({
              files: [
                { id: "f1", submissions: dated([{ ghost: "1", a: "2" }]) },
                { id: "missing", submissions: dated([{ other: "1" }]) }
              ]
            })
          )
          expect(refused._tag).toBe("FixtureInvalid")
          expect(yield* names("f1")).toEqual(["a"])
          yield* appendDocument({ files: [{ id: "f1", submissions: dated([{ b: "1" }, { ghost: "2" }]) }] })
          expect(yield* names("f1")).toEqual(["a", "b", "ghost"])
        }).pipe(withStorage())
      )

      it.effect("findFile finds any file by id with a read point, and nothing for an unknown id", () =>
        Effect.gen(function* () {
          const files = yield* FileRepository.FileRepository
          yield* importDocument({ users, files: [file({ id: "f1", userId: "u1", submissions: dated([{ a: "1" }]) })] })
          const found = Option.getOrThrow(yield* files.findFile(fileId("f1")))
          const viaKey = Option.getOrThrow(yield* findFile("k1", "f1"))
          expect(found).toEqual(viaKey)
          expect(yield* files.findFile(fileId("missing"))).toEqual(Option.none())
          yield* appendTo("f1", dated([{ b: "1" }], 1))
          const later = Option.getOrThrow(yield* files.findFile(fileId("f1")))
          expect(later.SubmissionCounter).toBe(2)
          expect(parsed(yield* pagesOf("f1", { upTo: found.readPoint }))).toHaveLength(1)
          expect(parsed(yield* pagesOf("f1", { upTo: later.readPoint }))).toHaveLength(2)
        }).pipe(withStorage())
      )
    })

    describe("OperatorStore", () => {
      it.effect("imports a fixture in batches, applying its defaults, and returns what it wrote", () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(Date.UTC(2024, 4, 1, 12))
          const summary = yield* importDocument({
            users: [{ id: "u1", apiKeys: ["k1", "k2"] }, { id: "u2" }],
            files: [
              file({ id: "f1", userId: "u1", submissions: submissionsEverySecond(1200) }),
              file({ id: "f2", userId: "u2" })
            ]
          })
          expect(summary).toEqual({ users: 2, apiKeys: 2, files: 2, submissions: 1200 })
          const f1 = yield* findFile("k1", "f1")
          expect(Option.map(f1, (f) => [f.SubmissionCounter, f.VisitCounter, f.publicAvailability])).toEqual(
            Option.some([1200, 0, false])
          )
          const rows = yield* readSubmissions("f1")
          expect(rows.map((row) => JSON.parse(row.contentJson).index)).toEqual(
            Array.from({ length: 1200 }, (_, i) => String(i))
          )
          const store = yield* OperatorStore.OperatorStore
          const keys = yield* store.listKeys(Option.none())
          expect(keys.map((key) => [key.userId, key.createdAt, key.revokedAt])).toEqual([
            ["u1", "2024-05-01T12:00:00.000Z", Option.none()],
            ["u1", "2024-05-01T12:00:00.000Z", Option.none()]
          ])
          expect(yield* census({ users: ["u1", "u2"], files: ["f1", "f2"] })).toEqual({
            users: 2,
            apiKeys: 2,
            files: 2,
            submissions: 1200
          })
        }).pipe(withStorage(500))
      )

      it.effect("writes nothing at all when only the last file of a fixture conflicts", () =>
        Effect.gen(function* () {
          yield* importDocument(existing)
          const error = yield* Effect.flip(
            importDocument({
              users: [
                { id: "u1", apiKeys: ["k1"] },
                { id: "u2", apiKeys: ["k2", "k3"] }
              ],
              files: [
                file({ id: "f1", userId: "u1", submissions: submissionsEverySecond(1100) }),
                file({ id: "f2", userId: "u-old", submissions: submissionsEverySecond(3) }),
                file({ id: "f-old", userId: "u2", submissions: submissionsEverySecond(1) })
              ]
            })
          )
          expect(issuesOf(error)).toEqual([{ path: "$.files[2].id", detail: "already exists" }])
          const ids = { users: ["u-old", "u1", "u2"], files: ["f-old", "f1", "f2"] }
          expect(yield* census(ids)).toEqual({ users: 1, apiKeys: 1, files: 1, submissions: 2 })
          const files = yield* FileRepository.FileRepository
          for (const key of ["k1", "k2", "k3"]) {
            expect(yield* files.findAccess(apiKey(key), fileId("f-old"))).toEqual(FileRepository.noAccess)
          }
          expect(Option.map(yield* findFile("old-key", "f-old"), (found) => found.ownerId)).toEqual(
            Option.some("u-old")
          )
          // The failed attempt left nothing behind that blocks the same fixture once it is fixed.
          const summary = yield* importDocument({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [file({ id: "f1", userId: "u1", submissions: submissionsEverySecond(3) })]
          })
          expect(summary).toEqual({ users: 1, apiKeys: 1, files: 1, submissions: 3 })
          expect(yield* census(ids)).toEqual({ users: 2, apiKeys: 2, files: 2, submissions: 5 })
        }).pipe(withStorage())
      )

      it.effect("names every entry that clashes with the database by its JSON path, and writes nothing", () =>
        Effect.gen(function* () {
          const store = yield* OperatorStore.OperatorStore
          yield* importDocument(existing)
          yield* store.createKey(userId("u-old"), apiKey("created-key"))
          const error = yield* Effect.flip(
            importDocument({
              users: [{ id: "u-old" }, { id: "u-new", apiKeys: ["old-key", "fresh-key", "created-key"] }],
              files: [
                file({ id: "f-ok", userId: "u-new" }),
                file({ id: "f-ok-2", userId: "u-old" }),
                file({ id: "f-old", userId: "nobody" })
              ]
            })
          )
          expect(issuesOf(error)).toEqual([
            { path: "$.users[0].id", detail: "already exists" },
            { path: "$.users[1].apiKeys[0]", detail: "is already in use" },
            { path: "$.users[1].apiKeys[2]", detail: "is already in use" },
            { path: "$.files[2].id", detail: "already exists" },
            { path: "$.files[2].userId", detail: "is not a user of this fixture or of the database" }
          ])
          expect(yield* census({ users: ["u-old", "u-new", "nobody"], files: ["f-old", "f-ok", "f-ok-2"] })).toEqual({
            users: 1,
            apiKeys: 2,
            files: 1,
            submissions: 2
          })
        }).pipe(withStorage())
      )

      it.effect("refuses a file of a user that is neither in the fixture nor in the database", () =>
        Effect.gen(function* () {
          const error = yield* Effect.flip(
            importDocument({ users: [{ id: "u1" }], files: [file({ id: "f1", userId: "u2" })] })
          )
          expect(issuesOf(error)).toEqual([
            { path: "$.files[0].userId", detail: "is not a user of this fixture or of the database" }
          ])
          expect(yield* census({ users: ["u1", "u2"], files: ["f1"] })).toEqual({
            users: 0,
            apiKeys: 0,
            files: 0,
            submissions: 0
          })
        }).pipe(withStorage())
      )

      it.effect("accepts files of users already in the database, and an empty fixture", () =>
        Effect.gen(function* () {
          yield* importDocument(existing)
          expect(yield* importDocument({ files: [file({ id: "f-new", userId: "u-old" })] })).toEqual({
            users: 0,
            apiKeys: 0,
            files: 1,
            submissions: 0
          })
          expect(yield* importDocument({})).toEqual({ users: 0, apiKeys: 0, files: 0, submissions: 0 })
          expect(yield* census({ users: ["u-old"], files: ["f-old", "f-new"] })).toEqual({
            users: 1,
            apiKeys: 1,
            files: 2,
            submissions: 2
          })
        }).pipe(withStorage())
      )

      it.effect("imports a decoded fixture as it imports a stream", () =>
        Effect.gen(function* () {
          const summary = yield* importDecoded({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [
              file({ id: "f1", userId: "u1", submissions: submissionsEverySecond(3) }),
              file({ id: "f2", userId: "u1" })
            ]
          })
          expect(summary).toEqual({ users: 1, apiKeys: 1, files: 2, submissions: 3 })
          expect((yield* readSubmissions("f1")).map((row) => JSON.parse(row.contentJson).index)).toEqual([
            "0",
            "1",
            "2"
          ])
        }).pipe(withStorage())
      )

      it.effect("takes users after files and a file's id after its submissions", () =>
        Effect.gen(function* () {
          yield* importDocument(existing)
          const store = yield* OperatorStore.OperatorStore
          const text = JSON.stringify({
            files: [
              {
                submissions: submissionsEverySecond(250),
                name: "F",
                creationDate: MIN_INSTANT,
                userId: "u1",
                id: "f1"
              },
              {
                submissions: submissionsEverySecond(3),
                id: "f2",
                userId: "u-old",
                name: "G",
                creationDate: MAX_INSTANT
              }
            ],
            users: [{ apiKeys: ["k1"], id: "u1" }]
          })
          const summary = yield* store.importFixture(FixtureReader.fromText(chunked(text, 1000), { batchSize: 100 }))
          expect(summary).toEqual({ users: 1, apiKeys: 1, files: 2, submissions: 253 })
          expect((yield* readSubmissions("f1")).map((row) => JSON.parse(row.contentJson).index)).toEqual(
            Array.from({ length: 250 }, (_, i) => String(i))
          )
          expect(yield* readSubmissions("f2")).toHaveLength(3)
          expect(Option.map(yield* findFile("k1", "f1"), (found) => [found.ownerId, found.SubmissionCounter])).toEqual(
            Option.some(["u1", 250])
          )
        }).pipe(withStorage())
      )

      it.effect("writes nothing when its stream fails after submissions were staged, and blocks no later import", () =>
        Effect.gen(function* () {
          const store = yield* OperatorStore.OperatorStore
          const decoded = yield* Effect.orDie(
            FixtureDocument.decode({
              users: [{ id: "u1", apiKeys: ["k1"] }],
              files: [file({ id: "f1", userId: "u1", submissions: submissionsEverySecond(1200) })]
            })
          )
          const entries = Fixture.entries(decoded)
          const error = yield* Effect.flip(
            store.importFixture(Stream.concat(entries, Stream.fail("the source went away" as const)))
          )
          expect(error).toBe("the source went away")
          expect(yield* census({ users: ["u1"], files: ["f1"] })).toEqual({
            users: 0,
            apiKeys: 0,
            files: 0,
            submissions: 0
          })
          expect(yield* store.importFixture(entries)).toEqual({ users: 1, apiKeys: 1, files: 1, submissions: 1200 })
        }).pipe(withStorage())
      )

      it.effect("writes nothing when the text turns out malformed or an entry is refused late in the stream", () =>
        Effect.gen(function* () {
          const store = yield* OperatorStore.OperatorStore
          const document = {
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [file({ id: "f1", userId: "u1", submissions: submissionsEverySecond(1000) })]
          }
          const text = JSON.stringify(document)
          const malformed = yield* Effect.flip(
            store.importFixture(FixtureReader.fromText(chunked(`${text.slice(0, -3)}}}`, 2000), { batchSize: 100 }))
          )
          expect(malformed).toBeInstanceOf(FixtureReader.FixtureMalformed)
          const late = submissionsEverySecond(1000).map((row, i) =>
            i === 999 ? { ...row, createdDate: "later" } : row
          )
          const refused = yield* Effect.flip(
            importDocument({ ...document, files: [file({ id: "f1", userId: "u1", submissions: late })] })
          )
          expect(issuesOf(refused)).toEqual([
            {
              path: "$.files[0].submissions[999].createdDate",
              detail: "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
            }
          ])
          expect(yield* census({ users: ["u1"], files: ["f1"] })).toEqual({
            users: 0,
            apiKeys: 0,
            files: 0,
            submissions: 0
          })
        }).pipe(withStorage())
      )

      it.effect("names decoding problems and conflicts with the database together, ordered by entry", () =>
        Effect.gen(function* () {
          yield* importDocument(existing)
          const broken = submissionsEverySecond(300).map((row, i) => (i === 250 ? { ...row, content: "text" } : row))
          const error = yield* Effect.flip(
            importDocument({
              files: [
                file({ id: "f1", userId: "u1", submissions: broken }),
                file({ id: "f2", userId: "nobody" }),
                { ...file({ id: "f3", userId: "u-bad" }), name: 7 },
                file({ id: "f-old", userId: "u-bad" })
              ],
              // u-bad is refused, but it is a user of this fixture: its files are not reported as unknown.
              users: [
                { id: "u1", apiKeys: ["old-key"] },
                { id: "u-bad", apiKeys: [1] }
              ]
            })
          )
          expect(issuesOf(error)).toEqual([
            { path: "$.users[0].apiKeys[0]", detail: "is already in use" },
            { path: "$.users[1].apiKeys[0]", detail: "must be a non-empty string" },
            { path: "$.files[0].submissions[250].content", detail: "must be an object of strings" },
            { path: "$.files[1].userId", detail: "is not a user of this fixture or of the database" },
            { path: "$.files[2].name", detail: "must be a string" },
            { path: "$.files[3].id", detail: "already exists" }
          ])
          expect(yield* census({ users: ["u-old", "u1", "u-bad"], files: ["f-old", "f1", "f2", "f3"] })).toEqual({
            users: 1,
            apiKeys: 1,
            files: 1,
            submissions: 2
          })
        }).pipe(withStorage())
      )

      it.effect("creates, lists and revokes keys; revoking again keeps the first revocation time", () =>
        Effect.gen(function* () {
          const store = yield* OperatorStore.OperatorStore
          yield* importDocument({ users: [{ id: "u1", apiKeys: ["k1"] }, { id: "u2" }] })
          const [imported] = yield* store.listKeys(Option.none())
          yield* TestClock.setTime(Date.UTC(2024, 0, 1, 8))
          const created = yield* store.createKey(userId("u2"), apiKey("k2"))
          expect(created).toEqual({
            id: created.id,
            userId: "u2",
            prefix: Option.none(),
            createdAt: "2024-01-01T08:00:00.000Z",
            revokedAt: Option.none()
          })
          expect(created.id).not.toEqual(imported?.id)
          expect(yield* Effect.flip(store.createKey(userId("ghost"), apiKey("k3")))).toEqual(
            new OperatorStore.UserNotFound({ userId: "ghost" })
          )
          yield* TestClock.adjust(Duration.hours(1))
          const revoked = yield* store.revokeKey(created.id)
          expect(revoked).toEqual({ ...created, revokedAt: Option.some("2024-01-01T09:00:00.000Z") })
          yield* TestClock.adjust(Duration.hours(1))
          expect(yield* store.revokeKey(created.id)).toEqual(revoked)
          for (const keyId of ["987654", "0", "-1", "abc", "", "1.0", " 1", "99999999999999999999"]) {
            expect(yield* Effect.flip(store.revokeKey(keyId))).toEqual(new OperatorStore.KeyNotFound({ keyId }))
          }
          expect(yield* store.listKeys(Option.none())).toEqual([imported, revoked])
          expect(yield* store.listKeys(Option.some(userId("u2")))).toEqual([revoked])
          expect(yield* store.listKeys(Option.some(userId("u1")))).toEqual([imported])
          expect(yield* store.listKeys(Option.some(userId("ghost")))).toEqual([])
          expect(yield* store.userExists(userId("u1"))).toBe(true)
          expect(yield* store.userExists(userId("U1"))).toBe(false)
          expect(yield* census({ users: ["u1", "u2", "ghost"], files: [] })).toEqual({
            users: 2,
            apiKeys: 2,
            files: 0,
            submissions: 0
          })
        }).pipe(withStorage())
      )

      it.effect("stamps keys with the clock's instant at both ends of the representable range", () =>
        Effect.gen(function* () {
          const store = yield* OperatorStore.OperatorStore
          yield* importDocument({ users: [{ id: "u1" }] })
          yield* TestClock.setTime(Date.parse(MIN_INSTANT))
          const early = yield* store.createKey(userId("u1"), apiKey("early"))
          yield* TestClock.setTime(Date.parse(MAX_INSTANT))
          const late = yield* store.createKey(userId("u1"), apiKey("late"))
          const revoked = yield* store.revokeKey(early.id)
          expect([early.createdAt, late.createdAt, revoked.revokedAt]).toEqual([
            MIN_INSTANT,
            MAX_INSTANT,
            Option.some(MAX_INSTANT)
          ])
          expect((yield* store.listKeys(Option.none())).map((key) => key.id)).toEqual([early.id, late.id])
        }).pipe(withStorage())
      )
    })

    describe("OperatorStore.appendSubmissions", () => {
      const MAX = Number.MAX_SAFE_INTEGER
      const at = (millis: number) => new Date(Date.UTC(2024, 5, 1) + millis).toISOString()
      const tagged = (tags: ReadonlyArray<string>, millis: (i: number) => number = (i) => i) =>
        tags.map((tag, i) => ({ createdDate: at(millis(i)), content: { tag } }))
      const tags = (id: string) =>
        Effect.map(readSubmissions(id), (rows) => rows.map((row) => JSON.parse(row.contentJson).tag as string))
      const counters = (id: string) =>
        Effect.map(
          findFile("k1", id),
          Option.map((found) => [found.SubmissionCounter, found.VisitCounter])
        )
      const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`)
      const base = {
        users: [{ id: "u1", apiKeys: ["k1"] }],
        files: [
          file({ id: "f1", userId: "u1", submissions: tagged(["old0", "old1"]) }),
          { ...file({ id: "f2", userId: "u1" }), SubmissionCounter: 7, VisitCounter: 40 },
          file({ id: "f3", userId: "u1" }),
          { ...file({ id: "f-max", userId: "u1" }), SubmissionCounter: MAX - 1 }
        ]
      }
      const unchanged = Effect.gen(function* () {
        expect(yield* tags("f1")).toEqual(["old0", "old1"])
        expect(yield* tags("f2")).toEqual([])
        expect(yield* tags("f-max")).toEqual([])
        expect(yield* counters("f1")).toEqual(Option.some([2, 0]))
        expect(yield* counters("f2")).toEqual(Option.some([7, 40]))
        expect(yield* counters("f-max")).toEqual(Option.some([MAX - 1, 0]))
      })

      it.effect("appends to one file across batches and grows its SubmissionCounter by the number appended", () =>
        Effect.gen(function* () {
          yield* importDocument(base)
          const added = numbered("new", 1250)
          const summary = yield* appendDocument({
            files: [{ id: "f1", submissions: tagged(added, (i) => 10 + i) }]
          })
          expect(summary).toEqual({ files: 1, submissions: 1250 })
          expect(yield* tags("f1")).toEqual(["old0", "old1", ...added])
          expect(yield* counters("f1")).toEqual(Option.some([1252, 0]))
          expect(yield* counters("f2")).toEqual(Option.some([7, 40]))
          expect(yield* tags("f2")).toEqual([])
        }).pipe(withStorage(500))
      )

      it.effect("appends to several files at once and replaces VisitCounter only where it is given", () =>
        Effect.gen(function* () {
          yield* importDocument(base)
          const summary = yield* appendDocument({
            files: [
              { submissions: tagged(["a"], () => 100), VisitCounter: 3, id: "f2" },
              { id: "f3", submissions: tagged(["b", "c"]) },
              { id: "f1", VisitCounter: 12 },
              { id: "f-max", VisitCounter: 0, submissions: tagged(["d"]) }
            ]
          })
          expect(summary).toEqual({ files: 4, submissions: 4 })
          expect(yield* counters("f1")).toEqual(Option.some([2, 12]))
          expect(yield* counters("f2")).toEqual(Option.some([8, 3]))
          expect(yield* counters("f3")).toEqual(Option.some([2, 0]))
          expect(yield* counters("f-max")).toEqual(Option.some([MAX, 0]))
          expect(yield* tags("f1")).toEqual(["old0", "old1"])
          expect(yield* tags("f2")).toEqual(["a"])
          expect(yield* tags("f3")).toEqual(["b", "c"])
          expect(yield* tags("f-max")).toEqual(["d"])
        }).pipe(withStorage())
      )

      it.effect("updates the counters of more files than one statement takes", () =>
        Effect.gen(function* () {
          const ids = numbered("many-", 1100)
          yield* importDocument({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: ids.map((id) => file({ id, userId: "u1" }))
          })
          const summary = yield* appendDocument({
            files: ids.map((id, i) => ({
              id,
              submissions: tagged(numbered(`${id}/`, i % 3)),
              ...(i % 2 === 0 ? { VisitCounter: i } : {})
            }))
          })
          expect(summary).toEqual({ files: 1100, submissions: 1099 })
          const found = yield* Effect.forEach(ids, (id) => findFile("k1", id))
          expect(found.map(Option.map((f) => [f.SubmissionCounter, f.VisitCounter]))).toEqual(
            ids.map((_, i) => Option.some([i % 3, i % 2 === 0 ? i : 0]))
          )
          expect(yield* tags("many-1099")).toEqual(["many-1099/0"])
        }).pipe(withStorage())
      )

      it.effect(
        "keeps ties in insertion order: the file's earlier rows first, then each append's in document order",
        () =>
          Effect.gen(function* () {
            const imported = [...tagged(["old0", "old1"], () => 5), ...tagged(["later"], () => 6)]
            yield* importDocument({
              users: [{ id: "u1", apiKeys: ["k1"] }],
              files: [file({ id: "f1", userId: "u1", submissions: imported })]
            })
            yield* appendDocument({
              files: [
                {
                  id: "f1",
                  submissions: [
                    ...tagged(["new0"], () => 5),
                    ...tagged(["early"], () => 4),
                    ...tagged(["new1"], () => 5)
                  ]
                }
              ]
            })
            expect(yield* tags("f1")).toEqual(["early", "old0", "old1", "new0", "new1", "later"])
            // A second append, here decoded whole as an embedder hands one over, goes after the first.
            const store = yield* OperatorStore.OperatorStore
            const second = yield* Effect.orDie(
              AppendDocument.decode({ files: [{ id: "f1", submissions: tagged(["new2", "new3"], () => 5) }] })
            )
            expect(yield* store.appendSubmissions(second)).toEqual({ files: 1, submissions: 2 })
            expect(yield* tags("f1")).toEqual(["early", "old0", "old1", "new0", "new1", "new2", "new3", "later"])
            expect(yield* counters("f1")).toEqual(Option.some([8, 0]))
          }).pipe(withStorage(2))
      )

      it.effect(
        "refuses unknown ids, a file named twice and a counter past the safe integers, by path, writing nothing",
        () =>
          Effect.gen(function* () {
            yield* importDocument(base)
            const error = yield* Effect.flip(
              appendDocument({
                files: [
                  { id: "f1", VisitCounter: 99, submissions: tagged(["x", "y"]) },
                  { id: "nope", submissions: tagged(["z"]) },
                  { id: "f1" },
                  { id: "f-max", submissions: tagged(["p", "q"]) },
                  { id: "f-gone" },
                  { id: "F2" }
                ]
              })
            )
            expect(issuesOf(error)).toEqual([
              { path: "$.files[1].id", detail: "no file has this id" },
              { path: "$.files[2].id", detail: "file id appears twice" },
              {
                path: "$.files[3].submissions",
                detail: `would take SubmissionCounter (${MAX - 1}) past the largest safe integer, ${MAX}`
              },
              { path: "$.files[4].id", detail: "no file has this id" },
              { path: "$.files[5].id", detail: "no file has this id" }
            ])
            yield* unchanged
            // The counter may reach the largest safe integer itself.
            expect(yield* appendDocument({ files: [{ id: "f-max", submissions: tagged(["p"]) }] })).toEqual({
              files: 1,
              submissions: 1
            })
            expect(yield* counters("f-max")).toEqual(Option.some([MAX, 0]))
          }).pipe(withStorage())
      )

      it.effect("names decoding problems and what storage refuses together, ordered by entry, writing nothing", () =>
        Effect.gen(function* () {
          yield* importDocument(base)
          const broken = tagged(numbered("s", 300)).map((row, i) => (i === 250 ? { ...row, content: "text" } : row))
          const error = yield* Effect.flip(
            appendDocument({
              files: [
                { id: "f1", submissions: broken },
                { id: "nope", VisitCounter: 1 },
                { id: "f2", VisitCounter: -1 },
                { id: "f-max", submissions: tagged(["p", "q"]) },
                { id: "f1" }
              ]
            })
          )
          expect(issuesOf(error)).toEqual([
            { path: "$.files[0].submissions[250].content", detail: "must be an object of strings" },
            { path: "$.files[1].id", detail: "no file has this id" },
            { path: "$.files[2].VisitCounter", detail: "must be a non-negative integer" },
            { path: "$.files[4].id", detail: "file id appears twice" }
          ])
          yield* unchanged
        }).pipe(withStorage())
      )

      it.effect(
        "writes nothing when its stream fails or an entry is refused part-way, and blocks no later append",
        () =>
          Effect.gen(function* () {
            const store = yield* OperatorStore.OperatorStore
            yield* importDocument(base)
            const decoded = yield* Effect.orDie(
              AppendDocument.decode({
                files: [
                  { id: "f2", submissions: tagged(numbered("s", 1200)), VisitCounter: 1 },
                  { id: "f1", submissions: tagged(["t"]) }
                ]
              })
            )
            const entries = Append.entries(decoded)
            const error = yield* Effect.flip(
              store.appendSubmissions(Stream.concat(entries, Stream.fail("the source went away" as const)))
            )
            expect(error).toBe("the source went away")
            yield* unchanged
            const late = tagged(numbered("s", 1000)).map((row, i) =>
              i === 999 ? { ...row, createdDate: "later" } : row
            )
            const refused = yield* Effect.flip(appendDocument({ files: [{ id: "f1", submissions: late }] }))
            expect(issuesOf(refused)).toEqual([
              {
                path: "$.files[0].submissions[999].createdDate",
                detail: "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
              }
            ])
            yield* unchanged
            expect(yield* store.appendSubmissions(entries)).toEqual({ files: 2, submissions: 1201 })
            expect(yield* counters("f2")).toEqual(Option.some([1207, 1]))
            expect(yield* counters("f1")).toEqual(Option.some([3, 0]))
          }).pipe(withStorage())
      )

      it.effect("takes an empty append, and a file entry with nothing to add, without changing anything", () =>
        Effect.gen(function* () {
          yield* importDocument(base)
          expect(yield* appendDocument({})).toEqual({ files: 0, submissions: 0 })
          expect(yield* appendDocument({ files: [] })).toEqual({ files: 0, submissions: 0 })
          expect(yield* appendDocument({ files: [{ id: "f1", submissions: [] }, { id: "f2" }] })).toEqual({
            files: 2,
            submissions: 0
          })
          yield* unchanged
        }).pipe(withStorage())
      )

      it.effect("shows a reader the file as it was while an append is under way, and all of it once it ends", () =>
        Effect.gen(function* () {
          const store = yield* OperatorStore.OperatorStore
          yield* importDocument(base)
          const reached = yield* Deferred.make<void>()
          const gate = yield* Deferred.make<void>()
          const batch = (from: number, to: number) =>
            Append.AppendEntry.Submissions({
              submissions: Array.from({ length: to - from }, (_, i) => ({
                file: 0,
                createdDate: Date.parse(at(10 + from + i)),
                contentJson: JSON.stringify({ tag: `new${from + i}` })
              }))
            })
          const source = Stream.concat(
            Stream.make(batch(0, 150)),
            Stream.concat(
              Stream.drain(
                Stream.fromEffect(Effect.zipRight(Deferred.succeed(reached, undefined), Deferred.await(gate)))
              ),
              Stream.make(
                batch(150, 300),
                Append.AppendEntry.File({ file: { id: fileId("f1"), VisitCounter: 5 }, index: 0 })
              )
            )
          )
          const append = yield* Effect.fork(store.appendSubmissions(source))
          yield* Deferred.await(reached)
          yield* unchanged
          expect(Option.isSome(yield* findFile("k1", "f1"))).toBe(true)
          yield* Deferred.succeed(gate, undefined)
          expect(yield* Fiber.join(append)).toEqual({ files: 1, submissions: 300 })
          expect(yield* counters("f1")).toEqual(Option.some([302, 5]))
          expect(yield* tags("f1")).toEqual(["old0", "old1", ...numbered("new", 300)])
        }).pipe(withStorage())
      )
    })

    describe("OperatorStore: key prefixes", () => {
      it.effect(
        "keeps the first characters of a long key, at creation and at import, and finds a key by its text",
        () =>
          Effect.gen(function* () {
            const store = yield* OperatorStore.OperatorStore
            const generated = `fdk_${"x".repeat(43)}`
            const long = "Long-operator-chosen-key-of-32-c"
            yield* importDocument({
              users: [{ id: "u1", apiKeys: [long, "short-key", `\u001b[31m${"y".repeat(40)}`] }]
            })
            const created = yield* store.createKey(userId("u1"), apiKey(generated))
            expect(created.prefix).toEqual(Option.some("fdk_xxxx"))
            const keys = yield* store.listKeys(Option.none())
            expect(keys.map((key) => key.prefix)).toEqual([
              Option.some("Long-ope"),
              Option.none(),
              Option.none(),
              Option.some("fdk_xxxx")
            ])
            expect(yield* store.findKey(apiKey("short-key"))).toEqual(Option.some(keys[1]))
            expect(yield* store.findKey(apiKey(generated))).toEqual(Option.some(created))
            const revoked = yield* store.revokeKey(created.id)
            expect(yield* store.findKey(apiKey(generated))).toEqual(Option.some(revoked))
            expect(yield* store.findKey(apiKey("unknown"))).toEqual(Option.none())
          }).pipe(withStorage())
      )
    })

    describe("OperatorStore: users", () => {
      it.effect("creates users that keys and fixtures can then refer to, and refuses an id that exists", () =>
        Effect.gen(function* () {
          const store = yield* OperatorStore.OperatorStore
          expect(yield* store.listUsers).toEqual([])
          yield* store.createUser(userId("u2"))
          yield* store.createUser(userId("u1"))
          expect(yield* store.userExists(userId("u1"))).toBe(true)
          expect(yield* Effect.flip(store.createUser(userId("u1")))).toEqual(
            new OperatorStore.UserExists({ userId: "u1" })
          )
          yield* store.createKey(userId("u1"), apiKey("k1"))
          yield* importDocument({ files: [file({ id: "f1", userId: "u2" })] })
          const imported = yield* Effect.flip(importDocument({ users: [{ id: "u2" }] }))
          expect(issuesOf(imported)).toEqual([{ path: "$.users[0].id", detail: "already exists" }])
          expect(yield* store.listUsers).toEqual([
            { id: "u1", activeKeys: 1, files: 0 },
            { id: "u2", activeKeys: 0, files: 1 }
          ])
        }).pipe(withStorage())
      )

      it.effect("lists users by id with their active keys and files", () =>
        Effect.gen(function* () {
          const store = yield* OperatorStore.OperatorStore
          yield* importDocument({
            users: [{ id: "u3", apiKeys: ["a", "b", "c"] }, { id: "u1" }, { id: "u2", apiKeys: ["d"] }],
            files: [
              file({ id: "f1", userId: "u3" }),
              file({ id: "f2", userId: "u3" }),
              file({ id: "f3", userId: "u2" })
            ]
          })
          const [first] = yield* store.listKeys(Option.some(userId("u3")))
          yield* store.revokeKey(first?.id ?? "")
          expect(yield* store.listUsers).toEqual([
            { id: "u1", activeKeys: 0, files: 0 },
            { id: "u2", activeKeys: 1, files: 1 },
            { id: "u3", activeKeys: 2, files: 2 }
          ])
        }).pipe(withStorage())
      )

      it.effect("creates users with ids of the longest length, astral ones too, that an import then finds taken", () =>
        Effect.gen(function* () {
          const store = yield* OperatorStore.OperatorStore
          const ids = ["😀".repeat(TextRules.maxIdLength), "é".repeat(TextRules.maxIdLength)]
          yield* Effect.forEach(ids, (id) => store.createUser(userId(id)))
          const imported = yield* Effect.flip(importDocument({ users: ids.map((id) => ({ id })) }))
          expect(issuesOf(imported)).toEqual([
            { path: "$.users[0].id", detail: "already exists" },
            { path: "$.users[1].id", detail: "already exists" }
          ])
          expect((yield* store.listUsers).map((user) => user.id).sort()).toEqual([...ids].sort())
        }).pipe(withStorage())
      )
    })
  })
}

/**
 * Builds an adapter that also provides `SubmissionSignals`; as {@link MakeStorage}, an empty store each call.
 *
 * @since 0.2.0
 * @category models
 */
export type MakeSignalledStorage = (options: {
  readonly pageSize: number
}) => Layer.Layer<
  FileRepository.FileRepository | OperatorStore.OperatorStore | SubmissionSignals.SubmissionSignals,
  FileDataError.StorageUnavailable
>

// Lets the adapter's poll tick on the test clock, and its storage answer in real time, until `fiber` is done.
const settled = <A>(fiber: Fiber.RuntimeFiber<A>) =>
  Effect.gen(function* () {
    for (let round = 0; round < 200; round++) {
      const exit = yield* Fiber.poll(fiber)
      if (Option.isSome(exit)) return yield* exit.value
      yield* TestClock.adjust(50)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    return yield* Effect.dieMessage("the wait did not end")
  })

/**
 * Registers the `SubmissionSignals` cases under `name`: a wait on a file's read point ends with `true` after an
 * append to it through the operator port, with `false` when its time is up or its signal aborts.
 *
 * @since 0.2.0
 * @category suites
 */
export const signalsSuite = (name: string, makeStorage: MakeSignalledStorage): void => {
  describe(name, { timeout: 60_000 }, () => {
    const users = [{ id: "u1", apiKeys: ["k1"] }]
    const files = [file({ id: "f1", userId: "u1" }), file({ id: "f2", userId: "u1" })]

    it.effect("a wait on a file's read point ends with true after an append to it", () =>
      Effect.gen(function* () {
        const signals = yield* SubmissionSignals.SubmissionSignals
        yield* importDocument({ users, files })
        const found = Option.getOrThrow(yield* findFile("k1", "f1"))
        const waiting = yield* Effect.fork(signals.changed(fileId("f1"), found.readPoint, { timeoutMillis: 600_000 }))
        yield* appendTo("f1", [{ createdDate: "2024-02-01T00:00:00.000Z", content: { n: "1" } }])
        expect(yield* settled(waiting)).toBe(true)
      }).pipe(Effect.provide(makeStorage({ pageSize: 1000 })))
    )

    it.effect("a wait ends with false when its time is up or its signal aborts", () =>
      Effect.gen(function* () {
        const signals = yield* SubmissionSignals.SubmissionSignals
        yield* importDocument({ users, files })
        const found = Option.getOrThrow(yield* findFile("k1", "f2"))
        const timed = yield* Effect.fork(signals.changed(fileId("f2"), found.readPoint, { timeoutMillis: 1000 }))
        expect(yield* settled(timed)).toBe(false)
        const ending = new AbortController()
        const aborted = yield* Effect.fork(
          signals.changed(fileId("f2"), found.readPoint, { timeoutMillis: 600_000, signal: ending.signal })
        )
        ending.abort()
        expect(yield* settled(aborted)).toBe(false)
      }).pipe(Effect.provide(makeStorage({ pageSize: 1000 })))
    )
  })
}
