import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as TextRules from "../../src/shared/TextRules.js"

// Any UTF-16 text: lone surrogates, pairs, U+0000 and everything else.
const anyText = FastCheck.string({
  unit: FastCheck.oneof(FastCheck.char16bits(), FastCheck.constantFrom("😀", "\u0000", "\ud800", "\udfff", "é"))
})

const messageOf = (schema: Schema.Schema<any, any>, input: unknown): string | undefined =>
  Either.match(Schema.decodeUnknownEither(schema)(input), {
    onLeft: (error) => ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message,
    onRight: () => undefined
  })

describe("TextRules", () => {
  it.prop(
    "well-formed means no lone surrogate, as a unicode regular expression and a UTF-8 round trip see it",
    [anyText],
    ([text]) => {
      expect(TextRules.isWellFormed(text)).toBe(!/[\uD800-\uDFFF]/u.test(text))
      // `ignoreBOM`: by default the decoder drops a leading U+FEFF, which is well-formed text all the same.
      const roundTrip = new TextDecoder("utf-8", { ignoreBOM: true }).decode(new TextEncoder().encode(text))
      expect(TextRules.isWellFormed(text)).toBe(roundTrip === text)
      expect(TextRules.isText(text)).toBe(TextRules.isWellFormed(text) && !text.includes("\u0000"))
    },
    { fastCheck: { numRuns: 2_000 } }
  )

  it.prop(
    "counts code points as the string iterator does, and an id fits by that count",
    [anyText],
    ([text]) => {
      expect(TextRules.codePoints(text)).toBe(Array.from(text).length)
      expect(TextRules.fitsId(text)).toBe(Array.from(text).length <= TextRules.maxIdLength)
    },
    { fastCheck: { numRuns: 2_000 } }
  )

  it("takes ids up to 256 code points, whatever their width in UTF-16 or UTF-8", () => {
    for (const unit of ["a", "é", "€", "😀"]) {
      expect(TextRules.isId(unit.repeat(256))).toBe(true)
      expect(TextRules.isId(unit.repeat(257))).toBe(false)
    }
    expect(TextRules.isId("")).toBe(false)
    expect(TextRules.isId(`${"a".repeat(255)}\ud800`)).toBe(false)
  })

  it.each([
    [TextRules.Id, 7, "must be a non-empty string"],
    [TextRules.Id, "", "must be a non-empty string"],
    [TextRules.Id, "x".repeat(257), "must be at most 256 characters"],
    [TextRules.Id, "a\u0000", "must not contain the character U+0000"],
    [TextRules.Id, "a\ud800", "must be well-formed Unicode (no lone surrogate)"],
    [TextRules.NonEmptyText, null, "must be a non-empty string"],
    [TextRules.NonEmptyText, "", "must be a non-empty string"],
    [TextRules.NonEmptyText, "\udc00", "must be well-formed Unicode (no lone surrogate)"],
    [TextRules.Text, 1, "must be a string"],
    [TextRules.Text, "\u0000", "must not contain the character U+0000"]
  ] as const)("refuses %#: with a fixed text", (schema, input, message) => {
    expect(messageOf(schema, input)).toBe(message)
    expect(TextRules.isFixedMessage(message)).toBe(true)
  })

  it("accepts any well-formed text without U+0000, the empty one where it may be empty", () => {
    expect(messageOf(TextRules.Text, "")).toBeUndefined()
    expect(messageOf(TextRules.NonEmptyText, "x".repeat(10_000))).toBeUndefined()
    expect(messageOf(TextRules.Id, "e\u0301\u202e😀\ufffd\u0001")).toBeUndefined()
  })
})
