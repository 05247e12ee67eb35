import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Fixture from "../../src/operator/Fixture.js"
import * as ImportRules from "../../src/operator/ImportRules.js"
import type { FileId, UserId } from "../../src/shared/FileData.js"

const file = (id: string, submissions: ReadonlyArray<Fixture.FixtureSubmission> = []): Fixture.FixtureFile => ({
  id: id as FileId,
  userId: "user-1" as UserId,
  name: "Contact form",
  creationDate: Date.UTC(2024, 0, 1),
  publicAvailability: false,
  SubmissionCounter: submissions.length,
  VisitCounter: 0,
  submissions
})
describe("ImportRules.stageEntries", () => {
  it.effect("stages a decoded fixture's submissions with their file's position and keeps the outline", () =>
    Effect.gen(function* () {
      const fixture: Fixture.Fixture = {
        users: [{ id: "user-1" as UserId, apiKeys: [] }],
        files: [
          file("empty"),
          file("two", [
            { createdDate: Date.UTC(2024, 0, 2), contentJson: '{"a":"1"}' },
            { createdDate: Date.UTC(2024, 0, 1), contentJson: '{"a":"2"}' }
          ])
        ]
      }
      const staged: Array<ReadonlyArray<Fixture.FileSubmission>> = []
      const outline = yield* ImportRules.stageEntries(fixture, (batch) => Effect.sync(() => void staged.push(batch)))
      expect(outline).toEqual({
        users: fixture.users.map((user, index) => ({ ...user, index })),
        files: fixture.files.map(({ submissions: _, ...header }, index) => ({ ...header, index })),
        submissions: 2,
        refused: Option.none()
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
      expect(yield* Effect.flip(ImportRules.stageEntries(failing, () => Effect.void))).toBe("gone")
      const fixture: Fixture.Fixture = {
        users: [],
        files: [file("f", [{ createdDate: Date.UTC(2024, 0, 2), contentJson: "{}" }])]
      }
      expect(yield* Effect.flip(ImportRules.stageEntries(fixture, () => Effect.fail("full" as const)))).toBe("full")
    })
  )
})

describe("ImportRules.stageEntries and ImportRules.refusal", () => {
  it.effect("keeps what a refusing source handed out, with positions, and the refusal", () =>
    Effect.gen(function* () {
      const decoding = new Fixture.FixtureInvalid({
        issues: [new Fixture.FixtureIssue({ path: "$.files[1].name", detail: "is required" })],
        omitted: 0
      })
      const source = Stream.concat(
        Stream.make(
          Fixture.FixtureEntry.User({ user: { id: "user-1" as UserId, apiKeys: [] }, index: 0 }),
          Fixture.FixtureEntry.File({ file: file("f0"), index: 0 }),
          Fixture.FixtureEntry.File({ file: file("f2"), index: 2 })
        ),
        Stream.fail(decoding)
      )
      const staged = yield* ImportRules.stageEntries(source, () => Effect.void)
      expect(staged.files.map((header) => [header.id, header.index])).toEqual([
        ["f0", 0],
        ["f2", 2]
      ])
      expect(staged.refused).toEqual(Option.some(decoding))
      const conflicts = ImportRules.conflicts(staged, {
        users: new Set(),
        files: new Set(["f2"]),
        keyInUse: () => false
      })
      expect(conflicts.map((issue) => issue.path)).toEqual(["$.files[2].id"])
    })
  )

  it("orders every issue by entry: the document's own, users, then files, each by position", () => {
    const issue = (path: string, detail = "x") => new Fixture.FixtureIssue({ path, detail })
    const decoding = new Fixture.FixtureInvalid({
      issues: [issue("$.files[10].name"), issue("$.files[2].submissions[0].createdDate"), issue("$.users[1].id")],
      omitted: 2
    })
    const refusal = ImportRules.refusal(Option.some(decoding), [
      issue("$.users[0].id", "already exists"),
      issue("$.files[2].userId", "unknown"),
      issue("$.files[9].id", "already exists")
    ])
    expect(Option.map(refusal, (error) => [error.issues.map((found) => found.path), error.omitted])).toEqual(
      Option.some([
        [
          "$.users[0].id",
          "$.users[1].id",
          "$.files[2].submissions[0].createdDate",
          "$.files[2].userId",
          "$.files[9].id",
          "$.files[10].name"
        ],
        2
      ])
    )
    expect(ImportRules.refusal(Option.none(), [])).toEqual(Option.none())
    const many = Array.from({ length: Fixture.issueLimit + 3 }, (_, i) => issue(`$.files[${i}].id`))
    expect(Option.map(ImportRules.refusal(Option.none(), many), (error) => error.omitted)).toEqual(Option.some(3))
  })
})
