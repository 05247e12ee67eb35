import { describe, expect, it } from "@effect/vitest"
import { FileRepository, type Fixture, OperatorStore } from "@filedata/core"
import { FixtureReader } from "@filedata/fixture"
import { SqliteStorage } from "@filedata/sqlite"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { apiKey, counts, file, fileId, fixture, tempDatabase, userId } from "./utils.js"

const withStorage = (filename: string) => Effect.provide(SqliteStorage.layer({ filename }))

const importDocument = (document: unknown) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    return yield* store.importFixture(yield* fixture(document))
  })

const issues = (error: Fixture.FixtureInvalid) =>
  error.issues.map((issue) => ({ path: issue.path, detail: issue.detail }))

const submissions = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    content: { index: String(i) }
  }))

const existing = {
  users: [{ id: "u-old", apiKeys: ["old-key"] }],
  files: [file({ id: "f-old", userId: "u-old", submissions: submissions(2) })]
}

describe("SqliteOperatorStore", () => {
  it.scoped("imports a fixture, applying its defaults, and returns what it wrote", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.gen(function* () {
        yield* TestClock.setTime(Date.UTC(2024, 4, 1, 12))
        const summary = yield* importDocument({
          users: [{ id: "u1", apiKeys: ["k1", "k2"] }, { id: "u2" }],
          files: [file({ id: "f1", userId: "u1", submissions: submissions(1200) }), file({ id: "f2", userId: "u2" })]
        })
        expect(summary).toEqual({ users: 2, apiKeys: 2, files: 2, submissions: 1200 })
        const files = yield* FileRepository.FileRepository
        const { file: f1 } = yield* files.findAccess(apiKey("k1"), fileId("f1"))
        expect(Option.map(f1, (f) => [f.SubmissionCounter, f.VisitCounter, f.publicAvailability])).toEqual(
          Option.some([1200, 0, false])
        )
        const store = yield* OperatorStore.OperatorStore
        expect((yield* store.listKeys(Option.none())).map((key) => key.createdAt)).toEqual([
          "2024-05-01T12:00:00.000Z",
          "2024-05-01T12:00:00.000Z"
        ])
      }).pipe(withStorage(filename))
      expect(yield* counts(filename)).toEqual({ users: 2, apiKeys: 2, files: 2, submissions: 1200 })
    })
  )

  it.scoped("writes nothing at all when the last file of a fixture conflicts", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const error = yield* Effect.gen(function* () {
        yield* importDocument(existing)
        return yield* Effect.flip(
          importDocument({
            users: [
              { id: "u1", apiKeys: ["k1"] },
              { id: "u2", apiKeys: ["k2", "k3"] }
            ],
            files: [
              file({ id: "f1", userId: "u1", submissions: submissions(1100) }),
              file({ id: "f2", userId: "u-old", submissions: submissions(3) }),
              file({ id: "f-old", userId: "u2", submissions: submissions(1) })
            ]
          })
        )
      }).pipe(withStorage(filename))
      expect(error._tag).toBe("FixtureInvalid")
      if (error._tag === "FixtureInvalid") {
        expect(issues(error)).toEqual([{ path: "$.files[2].id", detail: "already exists" }])
      }
      expect(yield* counts(filename)).toEqual({ users: 1, apiKeys: 1, files: 1, submissions: 2 })
    })
  )

  it.scoped("names every entry that clashes with the database by its JSON path", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const error = yield* Effect.gen(function* () {
        yield* importDocument(existing)
        return yield* Effect.flip(
          importDocument({
            users: [{ id: "u-old" }, { id: "u-new", apiKeys: ["old-key", "fresh-key"] }],
            files: [
              file({ id: "f-ok", userId: "u-new" }),
              file({ id: "f-ok-2", userId: "u-old" }),
              file({ id: "f-old", userId: "nobody" })
            ]
          })
        )
      }).pipe(withStorage(filename))
      expect(error._tag).toBe("FixtureInvalid")
      if (error._tag === "FixtureInvalid") {
        expect(issues(error)).toEqual([
          { path: "$.users[0].id", detail: "already exists" },
          { path: "$.users[1].apiKeys[0]", detail: "is already in use" },
          { path: "$.files[2].id", detail: "already exists" },
          { path: "$.files[2].userId", detail: "is not a user of this fixture or of the database" }
        ])
      }
      expect(yield* counts(filename)).toEqual({ users: 1, apiKeys: 1, files: 1, submissions: 2 })
    })
  )

  it.scoped("accepts files of users already in the database", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.gen(function* () {
        yield* importDocument(existing)
        const summary = yield* importDocument({ files: [file({ id: "f-new", userId: "u-old" })] })
        expect(summary).toEqual({ users: 0, apiKeys: 0, files: 1, submissions: 0 })
      }).pipe(withStorage(filename))
      expect(yield* counts(filename)).toEqual({ users: 1, apiKeys: 1, files: 2, submissions: 2 })
    })
  )

  it.scoped("a stream refused part-way writes nothing to the file and leaves no staging table behind", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      const rows = submissions(3000)
      const text = JSON.stringify({
        users: [{ id: "u1", apiKeys: ["k1"] }],
        files: [
          file({
            id: "f1",
            userId: "u1",
            submissions: [...rows, { createdDate: "2024-01-01T00:00:00.000Z", content: { n: 1 } }]
          })
        ]
      })
      const chunks = Stream.fromIterable(
        Array.from({ length: Math.ceil(text.length / 5000) }, (_, i) => text.slice(i * 5000, (i + 1) * 5000))
      )
      yield* Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        const error = yield* Effect.flip(store.importFixture(FixtureReader.fromText(chunks, { batchSize: 500 })))
        expect(error._tag).toBe("FixtureInvalid")
        if (error._tag === "FixtureInvalid") {
          expect(issues(error)).toEqual([
            { path: "$.files[0].submissions[3000].content.n", detail: "must be a string" }
          ])
        }
        // On the same connection: a staging table left behind would make the next import fail to create its own.
        yield* importDocument({
          users: [{ id: "u2" }],
          files: [file({ id: "f2", userId: "u2", submissions: submissions(2) })]
        })
        yield* importDocument({ users: [{ id: "u3" }] })
      }).pipe(withStorage(filename))
      expect(yield* counts(filename)).toEqual({ users: 2, apiKeys: 0, files: 1, submissions: 2 })
    })
  )

  it.scoped("creates, lists and revokes keys; revoking again keeps the first revocation time", () =>
    Effect.gen(function* () {
      const filename = yield* tempDatabase
      yield* Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        yield* importDocument({ users: [{ id: "u1", apiKeys: ["k1"] }, { id: "u2" }] })
        yield* TestClock.setTime(Date.UTC(2024, 0, 1, 8))
        const created = yield* store.createKey(userId("u2"), apiKey("k2"))
        expect(created).toEqual({
          id: "2",
          userId: "u2",
          prefix: Option.none(),
          createdAt: "2024-01-01T08:00:00.000Z",
          revokedAt: Option.none()
        })
        expect(yield* Effect.flip(store.createKey(userId("ghost"), apiKey("k3")))).toEqual(
          new OperatorStore.UserNotFound({ userId: "ghost" })
        )
        yield* TestClock.adjust(Duration.hours(1))
        const revoked = yield* store.revokeKey("2")
        expect(revoked.revokedAt).toEqual(Option.some("2024-01-01T09:00:00.000Z"))
        yield* TestClock.adjust(Duration.hours(1))
        expect(yield* store.revokeKey("2")).toEqual(revoked)
        for (const keyId of ["3", "0", "abc", "", "1.0", "99999999999999999999"]) {
          expect(yield* Effect.flip(store.revokeKey(keyId))).toEqual(new OperatorStore.KeyNotFound({ keyId }))
        }
        const all = yield* store.listKeys(Option.none())
        expect(all.map((key) => [key.id, key.userId, Option.isSome(key.revokedAt)])).toEqual([
          ["1", "u1", false],
          ["2", "u2", true]
        ])
        expect((yield* store.listKeys(Option.some(userId("u2")))).map((key) => key.id)).toEqual(["2"])
        expect(yield* store.listKeys(Option.some(userId("ghost")))).toEqual([])
        expect(yield* store.userExists(userId("u1"))).toBe(true)
        expect(yield* store.userExists(userId("ghost"))).toBe(false)
      }).pipe(withStorage(filename))
      expect(yield* counts(filename)).toEqual({ users: 2, apiKeys: 2, files: 0, submissions: 0 })
    })
  )
})
