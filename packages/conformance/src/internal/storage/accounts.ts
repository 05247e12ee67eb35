/**
 * The `accounts` section of `StorageConformance.suite`.
 *
 * @internal
 */
import { describe, expect, it } from "@effect/vitest"
import { OperatorStore, TextRules } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Fixtures from "./fixtures.js"

/**
 * Key prefixes and users as the operator port creates and lists them.
 *
 * @internal
 */
export const accounts = (withStorage: Fixtures.WithStorage): void => {
  describe("OperatorStore: key prefixes", () => {
    it.effect("keeps the first characters of a long key, at creation and at import, and finds a key by its text", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        const generated = `fdk_${"x".repeat(43)}`
        const long = "Long-operator-chosen-key-of-32-c"
        yield* Fixtures.importDocument({
          users: [{ id: "u1", apiKeys: [long, "short-key", `\u001b[31m${"y".repeat(40)}`] }]
        })
        const created = yield* store.createKey(Fixtures.userId("u1"), Fixtures.apiKey(generated))
        expect(created.prefix).toEqual(Option.some("fdk_xxxx"))
        const keys = yield* store.listKeys(Option.none())
        expect(keys.map((key) => key.prefix)).toEqual([
          Option.some("Long-ope"),
          Option.none(),
          Option.none(),
          Option.some("fdk_xxxx")
        ])
        expect(yield* store.findKey(Fixtures.apiKey("short-key"))).toEqual(Option.some(keys[1]))
        expect(yield* store.findKey(Fixtures.apiKey(generated))).toEqual(Option.some(created))
        const revoked = yield* store.revokeKey(created.id)
        expect(yield* store.findKey(Fixtures.apiKey(generated))).toEqual(Option.some(revoked))
        expect(yield* store.findKey(Fixtures.apiKey("unknown"))).toEqual(Option.none())
      }).pipe(withStorage())
    )
  })

  describe("OperatorStore: users", () => {
    it.effect("creates users that keys and fixtures can then refer to, and refuses an id that exists", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        expect(yield* store.listUsers).toEqual([])
        yield* store.createUser(Fixtures.userId("u2"))
        yield* store.createUser(Fixtures.userId("u1"))
        expect(yield* store.userExists(Fixtures.userId("u1"))).toBe(true)
        expect(yield* Effect.flip(store.createUser(Fixtures.userId("u1")))).toEqual(
          new OperatorStore.UserExists({ userId: "u1" })
        )
        yield* store.createKey(Fixtures.userId("u1"), Fixtures.apiKey("k1"))
        yield* Fixtures.importDocument({ files: [Fixtures.file({ id: "f1", userId: "u2" })] })
        expect(yield* Fixtures.importIssues({ users: [{ id: "u2" }] })).toEqual([
          { path: "$.users[0].id", detail: "already exists" }
        ])
        expect(yield* store.listUsers).toEqual([
          { id: "u1", activeKeys: 1, files: 0 },
          { id: "u2", activeKeys: 0, files: 1 }
        ])
      }).pipe(withStorage())
    )

    it.effect("lists users by id with their active keys and files", () =>
      Effect.gen(function* () {
        const store = yield* OperatorStore.OperatorStore
        yield* Fixtures.importDocument({
          users: [{ id: "u3", apiKeys: ["a", "b", "c"] }, { id: "u1" }, { id: "u2", apiKeys: ["d"] }],
          files: [
            Fixtures.file({ id: "f1", userId: "u3" }),
            Fixtures.file({ id: "f2", userId: "u3" }),
            Fixtures.file({ id: "f3", userId: "u2" })
          ]
        })
        const [first] = yield* store.listKeys(Option.some(Fixtures.userId("u3")))
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
        yield* Effect.forEach(ids, (id) => store.createUser(Fixtures.userId(id)))
        expect(yield* Fixtures.importIssues({ users: ids.map((id) => ({ id })) })).toEqual([
          { path: "$.users[0].id", detail: "already exists" },
          { path: "$.users[1].id", detail: "already exists" }
        ])
        expect((yield* store.listUsers).map((user) => user.id).sort()).toEqual([...ids].sort())
      }).pipe(withStorage())
    )
  })
}
