// An InvalidRequest built by a host for a body it could not read: plain `{ pointer, detail }` objects are issues
// as much as `Issue`s, so what type-checks also runs.
import { describe, expect, it } from "@effect/vitest"
import { FileDataError } from "../../src/index.js"

describe("FileDataError.invalidRequest", () => {
  it("takes plain issues and makes them Issues", () => {
    const refusal = FileDataError.invalidRequest("MalformedJson", [{ pointer: "", detail: "must be valid JSON" }])
    expect(refusal).toBeInstanceOf(FileDataError.InvalidRequest)
    expect(refusal.issues[0]).toBeInstanceOf(FileDataError.Issue)
    expect(refusal.issues).toEqual([new FileDataError.Issue({ pointer: "", detail: "must be valid JSON" })])
    expect(refusal.message).toBe("body: must be valid JSON")
  })

  it("lists at most issueLimit of them and counts the rest", () => {
    const issues = Array.from({ length: FileDataError.issueLimit + 3 }, (_, i) => ({ pointer: `/m${i}`, detail: "x" }))
    const refusal = FileDataError.invalidRequest("InvalidPayload", issues)
    expect(refusal.issues).toHaveLength(FileDataError.issueLimit)
    expect(refusal.omitted).toBe(3)
  })
})
