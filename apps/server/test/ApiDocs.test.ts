// docs/api.md and docs/problems.md are what client authors read: the table of problem codes must list exactly the
// codes the server answers with, and every problem document they show must carry the title the server gives its
// code and decode as the typed client decodes it.

import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { ApiError, FileDataApi } from "@filedata/client"
import * as Schema from "effect/Schema"

const apiDocs = ["api.md", "problems.md"]
  .map((name) => readFileSync(fileURLToPath(new URL(`../../../docs/${name}`, import.meta.url)), "utf8"))
  .join("\n")

/** The first two columns of the table whose header is `` | `code` | Status | When | ``, as `code status`. */
const documentedCodes = (): Array<string> => {
  const lines = apiDocs.split("\n")
  const header = lines.findIndex((line) => /^\|\s*`code`\s*\|\s*Status\s*\|/.test(line))
  expect(header).toBeGreaterThan(-1)
  const rows: Array<string> = []
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break
    const row = /^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/.exec(line)
    expect(row, line).not.toBeNull()
    rows.push(`${row?.[1]} ${row?.[2]}`)
  }
  return rows
}

describe("docs/api.md and docs/problems.md", () => {
  it("lists every problem code the server defines, with its status, and no other", () => {
    const codes = documentedCodes()
    expect(new Set(codes).size).toBe(codes.length)
    expect([...codes].sort()).toEqual(
      Object.entries(ApiError.problemCodes)
        .map(([code, { status }]) => `${code} ${status}`)
        .sort()
    )
  })

  it("shows each problem document with its code's own type and title", () => {
    const documents = [...apiDocs.matchAll(/\{"type":"urn:filedata:problem:[^`\n]*\}/g)].map((match) => match[0])
    expect(documents.length).toBeGreaterThan(10)
    for (const text of documents) {
      const document = JSON.parse(text) as { type: string; title: string; code: ApiError.ProblemCode }
      expect(Object.keys(ApiError.problemCodes), text).toContain(document.code)
      expect(document.type, text).toBe(`urn:filedata:problem:${document.code}`)
      expect(document.title, text).toBe(ApiError.problemCodes[document.code].title)
    }
  })

  it("shows validation problems the typed client decodes, omitted included", () => {
    const documents = [...apiDocs.matchAll(/\{"type":"urn:filedata:problem:[^`\n]*\}/g)]
      .map((match) => JSON.parse(match[0]) as { code: ApiError.ProblemCode; status: number })
      .filter((document) => document.status === 422 && document.code !== "rate_limited")
    expect(documents.length).toBeGreaterThan(10)
    const decode = Schema.decodeUnknownSync(FileDataApi.ValidationProblem)
    for (const document of documents) expect(decode(document)).toBeInstanceOf(ApiError.ValidationFailed)
    expect(documents.map((document) => decode(document).omitted)).toContain(2)
  })
})
