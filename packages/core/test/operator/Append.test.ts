import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Append from "../../src/operator/Append.js"
import * as Fixture from "../../src/operator/Fixture.js"
import * as ImportRules from "../../src/operator/ImportRules.js"
import type { FileId } from "../../src/shared/FileData.js"

const submission = (day: number): Fixture.FixtureSubmission => ({
  createdDate: Date.UTC(2024, 0, day),
  contentJson: `{"day":"${day}"}`
})
const header = (id: string, VisitCounter?: number): Append.AppendFileHeader =>
  VisitCounter === undefined ? { id: id as FileId } : { id: id as FileId, VisitCounter }
const at = (index: number, file: Append.AppendFileHeader): Append.OutlineFile => ({ ...file, index })
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
        files: [at(0, header("a")), at(1, header("b", 4)), at(2, header("c"))],
        appended: [0, 2, 1],
        submissions: 3,
        refused: Option.none()
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

  it.effect("keeps what a refusing source handed out, with positions, and the refusal, as an import does", () =>
    Effect.gen(function* () {
      const decoding = new Fixture.FixtureInvalid({
        issues: [
          new Fixture.FixtureIssue({ path: "$.files[1].VisitCounter", detail: "must be a non-negative integer" })
        ],
        omitted: 0
      })
      const source = Stream.concat(
        Stream.make(
          Append.AppendEntry.Submissions({ submissions: [{ ...submission(1), file: 0 }] }),
          Append.AppendEntry.File({ file: header("a"), index: 0 }),
          Append.AppendEntry.File({ file: header("c", 2), index: 2 })
        ),
        Stream.fail(decoding)
      )
      const staged = yield* Append.stageEntries(source, () => Effect.void)
      expect(staged).toEqual({
        files: [at(0, header("a")), at(2, header("c", 2))],
        appended: [1],
        submissions: 1,
        refused: Option.some(decoding)
      })
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
    const outline: Append.Staged = {
      files: [at(0, header("a")), at(1, header("b", 0))],
      appended: [0, 2],
      submissions: 2,
      refused: Option.none()
    }
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
    const outline: Append.Staged = {
      files: [at(0, header("a")), at(1, header("ghost")), at(2, header("a", 3)), at(3, header("b"))],
      appended: [1, 0, 0, 2, 0, 4],
      submissions: 7,
      refused: Option.none()
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

  it("names storage's problems of the entries a refusing source handed out, by their positions, none twice", () => {
    const refused = new Fixture.FixtureInvalid({
      issues: [new Fixture.FixtureIssue({ path: "$.files[1].id", detail: "is required" })],
      omitted: 0
    })
    // Position 1 was refused by the source, after a batch of its submissions had gone out.
    const staged: Append.Staged = {
      files: [at(0, header("a")), at(2, header("ghost")), at(3, header("a"))],
      appended: [0, 3],
      submissions: 3,
      refused: Option.some(refused)
    }
    const conflicts = Append.problems(staged, new Map([["a", 1]]))
    expect(lines(conflicts)).toEqual(["$.files[2].id: no file has this id", "$.files[3].id: file id appears twice"])
    expect(Option.map(ImportRules.refusal(staged.refused, conflicts), (error) => lines(error.issues))).toEqual(
      Option.some([
        "$.files[1].id: is required",
        "$.files[2].id: no file has this id",
        "$.files[3].id: file id appears twice"
      ])
    )
  })
})
