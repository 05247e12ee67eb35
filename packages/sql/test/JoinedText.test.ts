import { describe, expect, it } from "@effect/vitest"
import { EncodedPages, type FileRepository, SubmissionEntry, SubmissionId } from "@filedata/core"
import { JoinedText } from "@filedata/sql"
import * as FastCheck from "effect/FastCheck"

const entry = (text: string) => SubmissionEntry.render(0, JSON.stringify({ text }))
const idsOf = (entries: ReadonlyArray<unknown>) => entries.map(() => SubmissionId.unsafeRandom())

describe("JoinedText.page", () => {
  it.prop(
    "joins a page's entries, as stored or with their ids, by commas, as text while short and as UTF-8 bytes once long",
    {
      texts: FastCheck.array(
        FastCheck.oneof(
          FastCheck.string({ unit: "grapheme", maxLength: 40 }),
          FastCheck.constantFrom("é", "😀", "\u2028", "x".repeat(20_000), "é".repeat(9_000), "😀".repeat(7_000))
        ),
        { maxLength: 12 }
      ),
      hasMore: FastCheck.boolean(),
      form: FastCheck.constantFrom("stored" as const, "withId" as const)
    },
    ({ form, hasMore, texts }) => {
      const entries = texts.map(entry)
      const ids = idsOf(entries)
      const page: FileRepository.SubmissionPage = hasMore
        ? { entries, ids, next: "n", hasMore: true }
        : { entries, ids, next: undefined, hasMore: false }
      const joined = JoinedText.page(page, form)
      const text = (
        form === "stored"
          ? entries
          : entries.map((one, i) => SubmissionEntry.withId(ids[i] as SubmissionId.SubmissionId, one))
      ).join(",")
      expect(EncodedPages.joinedText(joined)).toBe(text)
      expect(typeof joined.joined === "string").toBe(text.length < JoinedText.maxTextLength)
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
    const joined = JoinedText.page({ entries, ids: idsOf(entries), next: undefined, hasMore: false })
    expect(joined.joined).toBeInstanceOf(Uint8Array)
    expect(joined.joined).toEqual(new TextEncoder().encode(entries.join(",")))
  })

  it.prop(
    "an export page: NDJSON lines with ids, CSV rows as the core renders them, as text while short and as bytes once long",
    {
      texts: FastCheck.array(FastCheck.constantFrom("a", 'é,"', "x".repeat(30_000), "😀".repeat(9_000)), {
        maxLength: 6
      }),
      csv: FastCheck.boolean()
    },
    ({ csv, texts }) => {
      const entries = texts.map(entry)
      const rows: EncodedPages.ExportRows = csv ? { format: "csv", names: ["text"] } : { format: "ndjson" }
      const ids = idsOf(entries)
      const page: FileRepository.SubmissionPage = { entries, ids, next: undefined, hasMore: false }
      const joined = JoinedText.exportPage(rows, page)
      const text = csv
        ? (EncodedPages.render(rows, page).joined as string)
        : entries.map((one, i) => `${SubmissionEntry.withId(ids[i] as SubmissionId.SubmissionId, one)}\n`).join("")
      expect(EncodedPages.joinedText(joined)).toBe(text)
      expect(typeof joined.joined === "string").toBe(text.length < JoinedText.maxTextLength)
    }
  )
})

describe("JoinedText.changes", () => {
  it("joins a feed page as EncodedPages.joinChanges does, as UTF-8 bytes once long", () => {
    const id = SubmissionId.unsafeRandom()
    const changes: Array<FileRepository.Change> = [
      { type: "submission.created", id, entry: entry("é😀\u2028") },
      { type: "submission.erased", id },
      { type: "submission.created", id, entry: entry("x".repeat(70_000)) }
    ]
    for (const count of [0, 2, 3]) {
      const page: FileRepository.ChangePage = { changes: changes.slice(0, count), next: "7", hasMore: count < 3 }
      const joined = JoinedText.changes(page)
      expect(typeof joined.joined).toBe(count === 3 ? "object" : "string")
      expect({ ...joined, joined: EncodedPages.joinedText(joined) }).toEqual(EncodedPages.joinChanges(page))
    }
  })
})
