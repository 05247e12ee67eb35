/**
 * The `files` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { FileRepository, OperatorStore } from "@filedata/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Fixtures from "./fixtures.js"

/**
 * Access and the stored file: keys, finds, content and instants as imported.
 *
 * @internal
 */
export const files = (withStorage: Fixtures.WithStorage): void => {
  describe("FileRepository", () => {
    it.effect("answers the owner of an active key with the file, and neither for an unknown or revoked key", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        const store = yield* OperatorStore.OperatorStore
        yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: ["key-one", "ключ 🔑"] }, { id: "u2" }],
          files: [Fixtures.file({ id: "f1", userId: "u1" })]
        })
        const access = (key: string, id = "f1") =>
          Effect.map(files.findAccess(Fixtures.apiKey(key), Fixtures.fileId(id)), ({ owner, file }) => [
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
        const created = yield* store.createKey(Fixtures.userId("u2"), Fixtures.apiKey("key-three"))
        expect(yield* access("key-three")).toEqual([Option.some("u2"), Option.some("f1")])
        yield* store.revokeKey(created.id)
        expect(yield* access("key-three")).toEqual([Option.none(), Option.none()])
        expect(yield* access("key-one")).toEqual([Option.some("u1"), Option.some("f1")])
      }).pipe(withStorage())
    )

    it.effect("finds a file with its metadata and counters, and nothing for an unknown id", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        yield* Fixtures.importDocument({
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
        expect(yield* files.findAccess(Fixtures.apiKey("k1"), Fixtures.fileId("f1"))).toEqual({
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
        expect(yield* files.findAccess(Fixtures.apiKey("k1"), Fixtures.fileId("f2"))).toEqual({
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
          expect(yield* files.findAccess(Fixtures.apiKey("k1"), Fixtures.fileId(unknown))).toEqual({
            owner: Option.some("u1"),
            file: Option.none()
          })
          expect(yield* Fixtures.readSubmissions(unknown)).toEqual([])
        }
        expect(yield* Fixtures.readSubmissions("f2")).toEqual([])
        yield* files.ping
      }).pipe(withStorage())
    )

    it.effect("finds another user's file through an active key: who may read it is the core's rule", () =>
      Effect.gen(function* () {
        const files = yield* FileRepository.FileRepository
        yield* Fixtures.importDocument({
          users: [
            { id: "u1", apiKeys: ["k1"] },
            { id: "u2", apiKeys: ["k2"] }
          ],
          files: [Fixtures.file({ id: "f1", userId: "u1" }), Fixtures.file({ id: "f2", userId: "u2" })]
        })
        const access = (key: string, id: string) =>
          Effect.map(files.findAccess(Fixtures.apiKey(key), Fixtures.fileId(id)), ({ owner, file }) => [
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
        yield* Fixtures.importDocument({
          users: [{ id: "u1" }],
          files: [
            Fixtures.file({
              id: "f1",
              userId: "u1",
              submissions: texts.map((text, i) => ({
                createdDate: `2024-01-02T09:30:0${i}.000Z`,
                content: JSON.parse(text)
              }))
            })
          ]
        })
        const rows = yield* Fixtures.readSubmissions("f1")
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
          Fixtures.MAX_INSTANT,
          "1970-01-01T00:00:00.000Z",
          "1969-12-31T23:59:59.999Z",
          Fixtures.MIN_INSTANT,
          "2024-02-29T23:59:59.999+01:00",
          "2024-06-01T09:00:00.5+02:00",
          "2024-06-01T07:00:00.001Z",
          "0000-01-01T00:00:00.001Z",
          "9999-12-31T23:59:59.998Z"
        ]
        yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: [
            { id: "f-min", userId: "u1", name: "min", creationDate: Fixtures.MIN_INSTANT },
            { id: "f-max", userId: "u1", name: "max", creationDate: Fixtures.MAX_INSTANT },
            Fixtures.file({
              id: "f1",
              userId: "u1",
              submissions: given.map((createdDate, i) => ({ createdDate, content: { i: String(i) } }))
            })
          ]
        })
        const creation = (id: string) =>
          Effect.map(
            Fixtures.findFile("k1", id),
            Option.map((found) => found.creationDate)
          )
        expect(yield* creation("f-min")).toEqual(Option.some(Fixtures.MIN_INSTANT))
        expect(yield* creation("f-max")).toEqual(Option.some(Fixtures.MAX_INSTANT))
        expect((yield* Fixtures.readSubmissions("f1")).map((row) => row.createdDate)).toEqual([
          Fixtures.MIN_INSTANT,
          "0000-01-01T00:00:00.001Z",
          "1969-12-31T23:59:59.999Z",
          "1970-01-01T00:00:00.000Z",
          "2024-02-29T22:59:59.999Z",
          "2024-06-01T07:00:00.001Z",
          "2024-06-01T07:00:00.500Z",
          "9999-12-31T23:59:59.998Z",
          Fixtures.MAX_INSTANT
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
            createdDate: FastCheck.constantFrom(...Fixtures.INSTANTS),
            content: FastCheck.dictionary(FastCheck.string(), FastCheck.string(), { maxKeys: 3 })
          }),
          { maxLength: 30 }
        )
      },
      ({ pageSize, rows }) =>
        Effect.gen(function* () {
          const submissionsOf = (id: string) =>
            rows.filter((row) => row.file === id).map(({ content, createdDate }) => ({ createdDate, content }))
          yield* Fixtures.importDocument({
            users: [{ id: "u1" }],
            files: [
              Fixtures.file({ id: "f1", userId: "u1", submissions: submissionsOf("f1") }),
              Fixtures.file({ id: "f2", userId: "u1", submissions: submissionsOf("f2") })
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
              yield* Stream.runCollect(Stream.chunks(FileRepository.submissions(files, Fixtures.fileId(id))))
            )
            expect(chunks.every((chunk) => Chunk.size(chunk) <= pageSize)).toBe(true)
            expect(chunks.flatMap(Chunk.toReadonlyArray)).toEqual(expected(id))
            // A stream is a description: running it again reads the same rows again.
            expect(yield* Fixtures.readSubmissions(id)).toEqual(expected(id))
          }
        }).pipe(withStorage(pageSize)),
      { fastCheck: { numRuns: 25 } }
    )
  })
}
