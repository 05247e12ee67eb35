/**
 * The `imports` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { FileRepository, Fixture, OperatorStore } from "@filedata/core"
import { FixtureDocument, FixtureReader } from "@filedata/fixture"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Fixtures from "./fixtures.js"

/**
 * Imports that are all or nothing, and keys created, listed and revoked.
 *
 * @internal
 */
export const imports = (withStorage: Fixtures.WithStorage): void => {
  describe("OperatorStore", () => {
    // What a census shows where an import wrote nothing, and where only `Fixtures.existing` was written.
    const nothing = { users: 0, apiKeys: 0, files: 0, submissions: 0 }
    const onlyExisting = { users: 1, apiKeys: 1, files: 1, submissions: 2 }
    // The `index` of each submission of a file made by `Fixtures.submissionsEverySecond`, in reply order.
    const indexes = (id: string) =>
      Effect.map(Fixtures.readSubmissions(id), (rows) => rows.map((row) => JSON.parse(row.contentJson).index))
    const firstIndexes = (count: number) => Array.from({ length: count }, (_, i) => String(i))

    it.effect("imports a fixture in batches, applying its defaults, and returns what it wrote", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.UTC(2024, 4, 1, 12))
        const summary = yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: ["k1", "k2"] }, { id: "u2" }],
          files: [
            Fixtures.file({ id: "f1", userId: "u1", submissions: Fixtures.submissionsEverySecond(1200) }),
            Fixtures.file({ id: "f2", userId: "u2" })
          ]
        })
        expect(summary).toEqual({ users: 2, apiKeys: 2, files: 2, submissions: 1200 })
        const f1 = yield* Fixtures.findFile("k1", "f1")
        expect(Option.map(f1, (f) => [f.SubmissionCounter, f.VisitCounter, f.publicAvailability])).toEqual(
          Option.some([1200, 0, false])
        )
        expect(yield* indexes("f1")).toEqual(firstIndexes(1200))
        const store = yield* OperatorStore.OperatorStore
        const keys = yield* store.listKeys(Option.none())
        expect(keys.map((key) => [key.userId, key.createdAt, key.revokedAt])).toEqual([
          ["u1", "2024-05-01T12:00:00.000Z", Option.none()],
          ["u1", "2024-05-01T12:00:00.000Z", Option.none()]
        ])
        // What the ports show is what the import said it wrote.
        expect(yield* Fixtures.census({ users: ["u1", "u2"], files: ["f1", "f2"] })).toEqual(summary)
      }).pipe(withStorage(500))
    )

    it.effect("writes nothing at all when only the last file of a fixture conflicts", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(Fixtures.existing)
        const issues = yield* Fixtures.importIssues({
          users: [
            { id: "u1", apiKeys: ["k1"] },
            { id: "u2", apiKeys: ["k2", "k3"] }
          ],
          files: [
            Fixtures.file({ id: "f1", userId: "u1", submissions: Fixtures.submissionsEverySecond(1100) }),
            Fixtures.file({ id: "f2", userId: "u-old", submissions: Fixtures.submissionsEverySecond(3) }),
            Fixtures.file({ id: "f-old", userId: "u2", submissions: Fixtures.submissionsEverySecond(1) })
          ]
        })
        expect(issues).toEqual([{ path: "$.files[2].id", detail: "already exists" }])
        const ids = { users: ["u-old", "u1", "u2"], files: ["f-old", "f1", "f2"] }
        expect(yield* Fixtures.census(ids)).toEqual(onlyExisting)
        const files = yield* FileRepository.FileRepository
        for (const key of ["k1", "k2", "k3"]) {
          expect(yield* files.findAccess(Fixtures.apiKey(key), Fixtures.fileId("f-old"))).toEqual(
            FileRepository.noAccess
          )
        }
        expect(Option.map(yield* Fixtures.findFile("old-key", "f-old"), (found) => found.ownerId)).toEqual(
          Option.some("u-old")
        )
        // The failed attempt left nothing behind that blocks the same fixture once it is fixed.
        const summary = yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: [Fixtures.file({ id: "f1", userId: "u1", submissions: Fixtures.submissionsEverySecond(3) })]
        })
        expect(summary).toEqual({ users: 1, apiKeys: 1, files: 1, submissions: 3 })
        expect(yield* Fixtures.census(ids)).toEqual({ users: 2, apiKeys: 2, files: 2, submissions: 5 })
      }).pipe(withStorage())
    )

    it.effect("names every entry that clashes with the database by its JSON path, and writes nothing", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        yield* Fixtures.importDocument(Fixtures.existing)
        yield* store.createKey(Fixtures.userId("u-old"), Fixtures.apiKey("created-key"))
        const issues = yield* Fixtures.importIssues({
          users: [{ id: "u-old" }, { id: "u-new", apiKeys: ["old-key", "fresh-key", "created-key"] }],
          files: [
            Fixtures.file({ id: "f-ok", userId: "u-new" }),
            Fixtures.file({ id: "f-ok-2", userId: "u-old" }),
            Fixtures.file({ id: "f-old", userId: "nobody" })
          ]
        })
        expect(issues).toEqual([
          { path: "$.users[0].id", detail: "already exists" },
          { path: "$.users[1].apiKeys[0]", detail: "is already in use" },
          { path: "$.users[1].apiKeys[2]", detail: "is already in use" },
          { path: "$.files[2].id", detail: "already exists" },
          { path: "$.files[2].userId", detail: "is not a user of this fixture or of the database" }
        ])
        const ids = { users: ["u-old", "u-new", "nobody"], files: ["f-old", "f-ok", "f-ok-2"] }
        // The key created beside the fixture, and nothing of the refused import.
        expect(yield* Fixtures.census(ids)).toEqual({ ...onlyExisting, apiKeys: 2 })
      }).pipe(withStorage())
    )

    it.effect("refuses a file of a user that is neither in the fixture nor in the database", () =>
      Effect.gen(function* () {
        const issues = yield* Fixtures.importIssues({
          users: [{ id: "u1" }],
          files: [Fixtures.file({ id: "f1", userId: "u2" })]
        })
        expect(issues).toEqual([
          { path: "$.files[0].userId", detail: "is not a user of this fixture or of the database" }
        ])
        expect(yield* Fixtures.census({ users: ["u1", "u2"], files: ["f1"] })).toEqual(nothing)
      }).pipe(withStorage())
    )

    it.effect("accepts files of users already in the database, and an empty fixture", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(Fixtures.existing)
        const added = yield* Fixtures.importDocument({ files: [Fixtures.file({ id: "f-new", userId: "u-old" })] })
        expect(added).toEqual({ ...nothing, files: 1 })
        expect(yield* Fixtures.importDocument({})).toEqual(nothing)
        expect(yield* Fixtures.census({ users: ["u-old"], files: ["f-old", "f-new"] })).toEqual({
          ...onlyExisting,
          files: 2
        })
      }).pipe(withStorage())
    )

    it.effect("imports a decoded fixture as it imports a stream", () =>
      Effect.gen(function* () {
        const summary = yield* Fixtures.importDecoded({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: [
            Fixtures.file({ id: "f1", userId: "u1", submissions: Fixtures.submissionsEverySecond(3) }),
            Fixtures.file({ id: "f2", userId: "u1" })
          ]
        })
        expect(summary).toEqual({ users: 1, apiKeys: 1, files: 2, submissions: 3 })
        expect(yield* indexes("f1")).toEqual(firstIndexes(3))
      }).pipe(withStorage())
    )

    it.effect("takes users after files and a file's id after its submissions", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(Fixtures.existing)
        const store = yield* OperatorStore.OperatorStore
        const text = JSON.stringify({
          files: [
            {
              submissions: Fixtures.submissionsEverySecond(250),
              name: "F",
              creationDate: Fixtures.MIN_INSTANT,
              userId: "u1",
              id: "f1"
            },
            {
              submissions: Fixtures.submissionsEverySecond(3),
              id: "f2",
              userId: "u-old",
              name: "G",
              creationDate: Fixtures.MAX_INSTANT
            }
          ],
          users: [{ apiKeys: ["k1"], id: "u1" }]
        })
        const summary = yield* store.importFixture(
          FixtureReader.fromText(Fixtures.chunked(text, 1000), { batchSize: 100 })
        )
        expect(summary).toEqual({ users: 1, apiKeys: 1, files: 2, submissions: 253 })
        expect(yield* indexes("f1")).toEqual(firstIndexes(250))
        expect(yield* Fixtures.readSubmissions("f2")).toHaveLength(3)
        expect(
          Option.map(yield* Fixtures.findFile("k1", "f1"), (found) => [found.ownerId, found.SubmissionCounter])
        ).toEqual(Option.some(["u1", 250]))
      }).pipe(withStorage())
    )

    it.effect("writes nothing when its stream fails after submissions were staged, and blocks no later import", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        const decoded = yield* Effect.orDie(
          FixtureDocument.decode({
            users: [{ id: "u1", apiKeys: ["k1"] }],
            files: [Fixtures.file({ id: "f1", userId: "u1", submissions: Fixtures.submissionsEverySecond(1200) })]
          })
        )
        const entries = Fixture.entries(decoded)
        const error = yield* Effect.flip(
          store.importFixture(Stream.concat(entries, Stream.fail("the source went away" as const)))
        )
        expect(error).toBe("the source went away")
        expect(yield* Fixtures.census({ users: ["u1"], files: ["f1"] })).toEqual(nothing)
        expect(yield* store.importFixture(entries)).toEqual({ users: 1, apiKeys: 1, files: 1, submissions: 1200 })
      }).pipe(withStorage())
    )

    it.effect("writes nothing when the text turns out malformed or an entry is refused late in the stream", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        const document = {
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: [Fixtures.file({ id: "f1", userId: "u1", submissions: Fixtures.submissionsEverySecond(1000) })]
        }
        const text = JSON.stringify(document)
        const malformed = yield* Effect.flip(
          store.importFixture(
            FixtureReader.fromText(Fixtures.chunked(`${text.slice(0, -3)}}}`, 2000), { batchSize: 100 })
          )
        )
        expect(malformed).toBeInstanceOf(FixtureReader.FixtureMalformed)
        const late = Fixtures.submissionsEverySecond(1000).map((row, i) =>
          i === 999 ? { ...row, createdDate: "later" } : row
        )
        const refused = yield* Fixtures.importIssues({
          ...document,
          files: [Fixtures.file({ id: "f1", userId: "u1", submissions: late })]
        })
        expect(refused).toEqual([
          {
            path: "$.files[0].submissions[999].createdDate",
            detail: "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
          }
        ])
        expect(yield* Fixtures.census({ users: ["u1"], files: ["f1"] })).toEqual(nothing)
      }).pipe(withStorage())
    )

    it.effect("names decoding problems and conflicts with the database together, ordered by entry", () =>
      Effect.gen(function* () {
        yield* Fixtures.importDocument(Fixtures.existing)
        const broken = Fixtures.submissionsEverySecond(300).map((row, i) =>
          i === 250 ? { ...row, content: "text" } : row
        )
        const issues = yield* Fixtures.importIssues({
          files: [
            Fixtures.file({ id: "f1", userId: "u1", submissions: broken }),
            Fixtures.file({ id: "f2", userId: "nobody" }),
            { ...Fixtures.file({ id: "f3", userId: "u-bad" }), name: 7 },
            Fixtures.file({ id: "f-old", userId: "u-bad" })
          ],
          // u-bad is refused, but it is a user of this fixture: its files are not reported as unknown.
          users: [
            { id: "u1", apiKeys: ["old-key"] },
            { id: "u-bad", apiKeys: [1] }
          ]
        })
        expect(issues).toEqual([
          { path: "$.users[0].apiKeys[0]", detail: "is already in use" },
          { path: "$.users[1].apiKeys[0]", detail: "must be a non-empty string" },
          { path: "$.files[0].submissions[250].content", detail: "must be an object of strings" },
          { path: "$.files[1].userId", detail: "is not a user of this fixture or of the database" },
          { path: "$.files[2].name", detail: "must be a string" },
          { path: "$.files[3].id", detail: "already exists" }
        ])
        const ids = { users: ["u-old", "u1", "u-bad"], files: ["f-old", "f1", "f2", "f3"] }
        expect(yield* Fixtures.census(ids)).toEqual(onlyExisting)
      }).pipe(withStorage())
    )

    it.effect("creates, lists and revokes keys; revoking again keeps the first revocation time", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        yield* Fixtures.importDocument({ users: [{ id: "u1", apiKeys: ["k1"] }, { id: "u2" }] })
        const [imported] = yield* store.listKeys(Option.none())
        yield* TestClock.setTime(Date.UTC(2024, 0, 1, 8))
        const created = yield* store.createKey(Fixtures.userId("u2"), Fixtures.apiKey("k2"))
        expect(created).toEqual({
          id: created.id,
          userId: "u2",
          prefix: Option.none(),
          createdAt: "2024-01-01T08:00:00.000Z",
          revokedAt: Option.none()
        })
        expect(created.id).not.toEqual(imported?.id)
        expect(yield* Effect.flip(store.createKey(Fixtures.userId("ghost"), Fixtures.apiKey("k3")))).toEqual(
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
        expect(yield* store.listKeys(Option.some(Fixtures.userId("u2")))).toEqual([revoked])
        expect(yield* store.listKeys(Option.some(Fixtures.userId("u1")))).toEqual([imported])
        expect(yield* store.listKeys(Option.some(Fixtures.userId("ghost")))).toEqual([])
        expect(yield* store.userExists(Fixtures.userId("u1"))).toBe(true)
        expect(yield* store.userExists(Fixtures.userId("U1"))).toBe(false)
        const ids = { users: ["u1", "u2", "ghost"], files: [] }
        expect(yield* Fixtures.census(ids)).toEqual({ ...nothing, users: 2, apiKeys: 2 })
      }).pipe(withStorage())
    )

    it.effect("stamps keys with the clock's instant at both ends of the representable range", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        yield* Fixtures.importDocument({ users: [{ id: "u1" }] })
        yield* TestClock.setTime(Date.parse(Fixtures.MIN_INSTANT))
        const early = yield* store.createKey(Fixtures.userId("u1"), Fixtures.apiKey("early"))
        yield* TestClock.setTime(Date.parse(Fixtures.MAX_INSTANT))
        const late = yield* store.createKey(Fixtures.userId("u1"), Fixtures.apiKey("late"))
        const revoked = yield* store.revokeKey(early.id)
        expect([early.createdAt, late.createdAt, revoked.revokedAt]).toEqual([
          Fixtures.MIN_INSTANT,
          Fixtures.MAX_INSTANT,
          Option.some(Fixtures.MAX_INSTANT)
        ])
        expect((yield* store.listKeys(Option.none())).map((key) => key.id)).toEqual([early.id, late.id])
      }).pipe(withStorage())
    )
  })
}
