import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as FileDataEncoder from "../../src/read/FileDataEncoder.js"
import * as FileRepository from "../../src/shared/FileRepository.js"
import * as SubmissionEntry from "../../src/shared/SubmissionEntry.js"

const entry = (text: string) => SubmissionEntry.render(0, JSON.stringify({ text }))

describe("FileRepository.join", () => {
  it.prop(
    "joins a page's entries by commas, as text while short and as UTF-8 bytes once long, with its count and end",
    {
      texts: FastCheck.array(
        FastCheck.oneof(
          FastCheck.string({ unit: "grapheme", maxLength: 40 }),
          FastCheck.constantFrom("é", "😀", "\u2028", "x".repeat(20_000), "é".repeat(9_000), "😀".repeat(7_000))
        ),
        { maxLength: 12 }
      ),
      hasMore: FastCheck.boolean()
    },
    ({ hasMore, texts }) => {
      const entries = texts.map(entry)
      const page: FileRepository.SubmissionPage = hasMore
        ? { entries, next: "n", hasMore: true }
        : { entries, next: undefined, hasMore: false }
      const joined = FileRepository.join(page)
      const text = entries.join(",")
      expect(FileRepository.joinedText(joined)).toBe(text)
      expect(typeof joined.joined === "string").toBe(text.length < FileDataEncoder.maxPieceLength)
      expect({ ...joined, joined: undefined }).toEqual({
        joined: undefined,
        count: entries.length,
        next: page.next,
        hasMore
      })
    }
  )

  it("a long page of multi-byte entries comes out as its exact UTF-8 bytes", () => {
    const entries = ["é".repeat(20_000), "😀".repeat(10_000), "x", "\u2028".repeat(9_000)].flatMap((text) => [
      entry(text),
      entry(text)
    ])
    const joined = FileRepository.join({ entries, next: undefined, hasMore: false })
    expect(joined.joined).toBeInstanceOf(Uint8Array)
    expect(joined.joined).toEqual(new TextEncoder().encode(entries.join(",")))
  })
})
