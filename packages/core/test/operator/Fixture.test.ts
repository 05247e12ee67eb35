import { describe, expect, it } from "@effect/vitest"
import * as Fixture from "../../src/operator/Fixture.js"

describe("Fixture.jsonPath", () => {
  it("renders identifiers with dots and everything else in brackets", () => {
    expect(Fixture.jsonPath([])).toBe("$")
    expect(Fixture.jsonPath(["files", 0, "submissions", 12, "createdDate"])).toBe(
      "$.files[0].submissions[12].createdDate"
    )
    expect(Fixture.jsonPath(["_a", "$b", "c9", "__proto__"])).toBe("$._a.$b.c9.__proto__")
    expect(Fixture.jsonPath(["0"])).toBe('$["0"]')
    expect(Fixture.jsonPath(["9lives"])).toBe('$["9lives"]')
    expect(Fixture.jsonPath([""])).toBe('$[""]')
    expect(Fixture.jsonPath(["a b"])).toBe('$["a b"]')
    expect(Fixture.jsonPath(["a.b"])).toBe('$["a.b"]')
    expect(Fixture.jsonPath(['say "hi"'])).toBe('$["say \\"hi\\""]')
    expect(Fixture.jsonPath(["a]b"])).toBe('$["a]b"]')
    expect(Fixture.jsonPath(["é"])).toBe('$["é"]')
    expect(Fixture.jsonPath(["line\nbreak"])).toBe('$["line\\nbreak"]')
  })
})

describe("Fixture.FixtureInvalid", () => {
  it("lists its issues and counts the ones left out", () => {
    const issues = [new Fixture.FixtureIssue({ path: "$.users[0].id", detail: "is required" })]
    expect(new Fixture.FixtureInvalid({ issues }).message).toBe("$.users[0].id: is required")
    expect(new Fixture.FixtureInvalid({ issues, omitted: 3 }).message).toBe("$.users[0].id: is required\nand 3 more")
  })
})
