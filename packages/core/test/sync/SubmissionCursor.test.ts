import { describe, expect, it } from "@effect/vitest"
import { Arbitraries } from "@filedata/testing"
import * as Encoding from "effect/Encoding"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import type { FileId } from "../../src/shared/FileData.js"
import * as SubmissionCursor from "../../src/sync/SubmissionCursor.js"

const fileId = FastCheck.oneof(
  FastCheck.string({ minLength: 1 }),
  Arbitraries.binaryString({ minLength: 1 }),
  FastCheck.constantFrom("f", "f1", "1:f", "ключ 🔑", "a\u0000b")
).map((id) => id as FileId)
// Positions as the adapters make them, and any other text.
const position = FastCheck.oneof(
  FastCheck.tuple(FastCheck.integer({ min: -62167219200000, max: 253402300799999 }), FastCheck.nat()).map(
    ([createdDate, seq]) => `${createdDate}:${seq}`
  ),
  FastCheck.string(),
  Arbitraries.binaryString()
)

describe("SubmissionCursor", () => {
  it.prop("a cursor gives back its position for its file, in URL-safe text", [fileId, position], ([id, at]) => {
    const cursor = SubmissionCursor.encode(id, at)
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(SubmissionCursor.decode(id, cursor)).toEqual(Option.some(at))
  })

  it.prop(
    "a cursor of one file is refused for any other",
    [fileId, fileId, position],
    ([mine, theirs, at]) => {
      FastCheck.pre(mine !== theirs)
      expect(SubmissionCursor.decode(theirs, SubmissionCursor.encode(mine, at))).toEqual(Option.none())
    },
    { fastCheck: { numRuns: 1000 } }
  )

  it.prop(
    "a truncated or altered cursor is refused",
    [fileId, position, FastCheck.nat(), FastCheck.nat()],
    ([id, at, cut, change]) => {
      const cursor = SubmissionCursor.encode(id, at)
      expect(SubmissionCursor.decode(id, cursor.slice(0, cut % cursor.length))).toEqual(Option.none())
      const i = change % cursor.length
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
      const other = alphabet[(alphabet.indexOf(cursor[i] as string) + 1 + (change % 63)) % 64] as string
      expect(SubmissionCursor.decode(id, `${cursor.slice(0, i)}${other}${cursor.slice(i + 1)}`)).toEqual(Option.none())
      // The same bytes spelled otherwise: padded, or broken over lines.
      for (const respelled of [`${cursor}=`, `${cursor}==`, `${cursor}\n`, `\r\n${cursor}`, ` ${cursor}`]) {
        expect(SubmissionCursor.decode(id, respelled)).toEqual(Option.none())
      }
    }
  )

  it.prop(
    "any other text is refused, or is to the letter a cursor made for this very file",
    [
      fileId,
      FastCheck.oneof(
        FastCheck.string(),
        FastCheck.stringMatching(/^[A-Za-z0-9_-]{0,60}$/),
        // Base64url of text that starts like a cursor of this layout.
        FastCheck.string().map((text) => Encoding.encodeBase64Url(`1${text}`))
      )
    ],
    ([id, text]) => {
      const decoded = SubmissionCursor.decode(id, text)
      if (Option.isSome(decoded)) expect(SubmissionCursor.encode(id, decoded.value)).toBe(text)
    },
    { fastCheck: { numRuns: 2000 } }
  )
})
