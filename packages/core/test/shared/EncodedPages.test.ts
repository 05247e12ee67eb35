import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as EncodedPages from "../../src/shared/EncodedPages.js"
import type * as FileRepository from "../../src/shared/FileRepository.js"
import * as SubmissionEntry from "../../src/shared/SubmissionEntry.js"
import * as SubmissionId from "../../src/shared/SubmissionId.js"
import * as TestFileRepository from "../utils/TestFileRepository.js"

const entries = ["a", "é", "b"].map((text) => SubmissionEntry.render(0, JSON.stringify({ text })))
const ids = ["sub_a", "sub_e", "sub_b"].map(SubmissionId.unsafeStored)

describe("EncodedPages", () => {
  it("joins and renders a domain page as the reply and the export write it, with each id where they show it", () => {
    const page: FileRepository.SubmissionPage = { entries, ids, next: "n", hasMore: true }
    expect(EncodedPages.join(page)).toEqual({ joined: entries.join(","), count: 3, next: "n", hasMore: true })
    const identified = ['{"id":"sub_a",', '{"id":"sub_e",', '{"id":"sub_b",'].map((start, i) =>
      start.concat((entries[i] as string).slice(1))
    )
    expect(EncodedPages.join(page, "withId").joined).toBe(identified.join(","))
    expect(JSON.parse(`[${EncodedPages.join(page, "withId").joined}]`)[1]).toEqual({
      id: "sub_e",
      createdDate: "1970-01-01T00:00:00.000Z",
      content: { text: "é" }
    })
    expect(EncodedPages.render({ format: "ndjson" }, page).joined).toBe(identified.map((line) => `${line}\n`).join(""))
  })

  it.effect("of: the adapter's own capability when it has one, else one written from readSubmissions", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make({
        users: [{ id: "alice", apiKeys: ["k"] }],
        files: [
          {
            id: "f",
            ownerId: "alice",
            submissions: [{ createdDate: "2026-01-01T00:00:00.000Z", content: { text: "a" } }]
          }
        ]
      }).repository
      const fileId = "f" as FileRepository.FoundFile["id"]
      const pages = EncodedPages.of(repository)
      expect(EncodedPages.of(repository)).toBe(pages)
      const domain = yield* repository.readSubmissions(fileId, {})
      expect(yield* pages.readJoined(fileId, {}, "stored")).toEqual(EncodedPages.join(domain))
      expect(yield* pages.readJoined(fileId, {}, "withId")).toEqual(EncodedPages.join(domain, "withId"))
      expect(yield* pages.readExportRows(fileId, {}, { format: "ndjson" })).toEqual(
        EncodedPages.render({ format: "ndjson" }, domain)
      )
      const own = { ...pages }
      expect(EncodedPages.of({ ...repository, encodedPages: own })).toBe(own)
    })
  )
})
