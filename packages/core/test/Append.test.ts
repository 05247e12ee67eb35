import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Append from "../src/Append.js"
import type { FileId } from "../src/FileData.js"
import type * as Fixture from "../src/Fixture.js"

const submission = (day: number): Fixture.FixtureSubmission => ({
  createdDate: Date.UTC(2024, 0, day),
  contentJson: `{"day":"${day}"}`
})
const header = (id: string, VisitCounter?: number): Append.AppendFileHeader =>
  VisitCounter === undefined ? { id: id as FileId } : { id: id as FileId, VisitCounter }
const lines = (issues: ReadonlyArray<Fixture.FixtureIssue>) => issues.map((issue) => `${issue.path}: ${issue.detail}`)

describe("Append.stageEntries", () => {
  it.effect("stages a decoded append's submissions with their file's position and counts them per file", () =>
    Effect.gen(function* () {
      const append: Append.Append = {
        files: [
          { ...header("a"), submissions: [] },
          { ...header("b", 4), submissions: [submission(2), submission(1)] },
          { ...header("c"), submissions: [submission(3)] }
        ]
      }
      const staged: Array<ReadonlyArray<Fixture.FileSubmission>> = []
      const outline = yield* Append.stageEntries(append, (batch) => Effect.sync(() => void staged.push(batch)))
      expect(outline).toEqual({
        files: [header("a"), header("b", 4), header("c")],
        appended: [0, 2, 1],
        submissions: 3
      })
      expect(staged).toEqual([
        [
          { ...submission(2), file: 1 },
          { ...submission(1), file: 1 }
        ],
        [{ ...submission(3), file: 2 }]
      ])
    })
  )

  it.effect("passes a failure of the stream or of staging on", () =>
    Effect.gen(function* () {
      expect(yield* Effect.flip(Append.stageEntries(Stream.fail("gone" as const), () => Effect.void))).toBe("gone")
      const append: Append.Append = { files: [{ ...header("a"), submissions: [submission(1)] }] }
      expect(yield* Effect.flip(Append.stageEntries(append, () => Effect.fail("full" as const)))).toBe("full")
    })
  )
})

describe("Append.problems", () => {
  const MAX = Number.MAX_SAFE_INTEGER

  it("accepts files that exist, up to the largest safe counter", () => {
    const outline: Append.AppendOutline = { files: [header("a"), header("b", 0)], appended: [0, 2], submissions: 2 }
    expect(Append.lookups(outline)).toEqual(["a", "b"])
    expect(
      Append.problems(
        outline,
        new Map([
          ["a", MAX],
          ["b", MAX - 2]
        ])
      )
    ).toEqual([])
  })

  it("names unknown ids, files named twice, counters past the safe integers and unclaimed submissions", () => {
    const outline: Append.AppendOutline = {
      files: [header("a"), header("ghost"), header("a", 3), header("b")],
      appended: [1, 0, 0, 2, 0, 4],
      submissions: 7
    }
    expect(Append.lookups(outline)).toEqual(["a", "ghost", "b"])
    expect(
      lines(
        Append.problems(
          outline,
          new Map([
            ["a", 1],
            ["b", MAX - 1]
          ])
        )
      )
    ).toEqual([
      "$.files[1].id: no file has this id",
      "$.files[2].id: file id appears twice",
      `$.files[3].submissions: would take SubmissionCounter (${MAX - 1}) past the largest safe integer, ${MAX}`,
      "$.files[5].id: is required"
    ])
  })
})
