import { describe, expect, it } from "@effect/vitest"
import { Arbitraries } from "@filedata/testing"
import * as FastCheck from "effect/FastCheck"
import * as ContentCoding from "../src/ContentCoding.js"

const weight = FastCheck.oneof(
  FastCheck.constant(undefined),
  FastCheck.constantFrom("0", "1", "0.5", "0.001", "0.999", "1.000", "0.", "1.0")
)
const name = FastCheck.constantFrom("br", "gzip", "identity", "*", "deflate", "zstd", "x-gzip")
const element = FastCheck.record({
  name,
  upper: FastCheck.boolean(),
  q: weight,
  space: FastCheck.constantFrom("", " ", "\t", "  ")
})

const render = (
  elements: ReadonlyArray<FastCheck.RecordValue<{ name: string; upper: boolean; q: string | undefined; space: string }>>
) =>
  elements
    .map(
      (e) =>
        `${e.space}${e.upper ? e.name.toUpperCase() : e.name}${e.q === undefined ? "" : `${e.space};${e.space}q=${e.q}`}${e.space}`
    )
    .join(",")

// The weight of `coding` by RFC 9110's rules, from the elements as generated: its own (highest), else `*`'s.
const reference = (elements: ReadonlyArray<{ name: string; q: string | undefined }>, coding: string) => {
  const named = (n: string) => (n === "x-gzip" ? "gzip" : n)
  const own = elements.filter((e) => named(e.name) === coding).map((e) => Number(e.q ?? "1"))
  const any = elements.filter((e) => e.name === "*").map((e) => Number(e.q ?? "1"))
  return own.length > 0 ? Math.max(...own) : any.length > 0 ? Math.max(...any) : undefined
}

describe("ContentCoding", () => {
  it("no field, an empty one or nothing acceptable: identity", () => {
    for (const field of [undefined, "", " ", ",", "identity", "deflate", "gzip;q=0", "br;q=0, gzip;q=0", "zstd"]) {
      expect(ContentCoding.negotiate(field)).toBe("identity")
    }
  })

  it("identity refused and neither coding acceptable: identity all the same (the field is disregarded)", () => {
    expect(ContentCoding.negotiate("identity;q=0")).toBe("identity")
    expect(ContentCoding.negotiate("*;q=0")).toBe("identity")
    expect(ContentCoding.negotiate("deflate, identity;q=0")).toBe("identity")
  })

  it("weights, wildcards, case and whitespace", () => {
    const cases: ReadonlyArray<readonly [string, ContentCoding.Coding]> = [
      ["gzip", "gzip"],
      ["br", "br"],
      ["gzip, br", ContentCoding.preferred[0] as ContentCoding.Coding],
      ["*", ContentCoding.preferred[0] as ContentCoding.Coding],
      ["gzip;q=0.5, br;q=0.4", "gzip"],
      ["gzip;q=0.4, br;q=0.5", "br"],
      ["br;q=0, *", "gzip"],
      ["gzip;q=0, *;q=0.1", "br"],
      ["GZIP", "gzip"],
      ["Br ; Q=0.7", "br"],
      ["\tgzip\t;\tq=1.0\t", "gzip"],
      ["x-gzip", "gzip"],
      ["identity;q=1, gzip;q=0.5", "identity"],
      ["identity;q=0.5, gzip;q=0.5", "gzip"],
      ["*;q=0.6, gzip;q=0.5, br;q=0.5", "identity"],
      ["gzip;q=0.001", "gzip"],
      // Malformed elements are left out; the rest still count.
      ["gzip;q=2, br", "br"],
      ["gzip;q=0.5000, br;q=0.1", "br"],
      ["gzip;level=1, br;q=0.1", "br"],
      ["gzip;q=0.5;q=0.6, br;q=0.1", "br"],
      ["g zip, br;q=0.2", "br"],
      ["gzip;q=, br;q=0.2", "br"],
      [";q=1, gzip", "gzip"]
    ]
    for (const [field, coding] of cases) expect([field, ContentCoding.negotiate(field)]).toEqual([field, coding])
  })

  it("several header lines count as one list", () => {
    expect(ContentCoding.negotiate(["identity;q=0.1", "gzip;q=0.2"])).toBe("gzip")
  })

  it.prop(
    "chooses the acceptable coding of highest weight, ties by preference, identity only when weighed higher",
    [FastCheck.array(element, { maxLength: 6 })],
    ([elements]) => {
      const field = render(elements)
      const weights = ContentCoding.preferred.map((coding) => reference(elements, coding) ?? 0)
      const best = Math.max(...weights)
      const identity = reference(elements, "identity")
      const expected: ContentCoding.Coding =
        best <= 0 || (identity !== undefined && identity > best)
          ? "identity"
          : (ContentCoding.preferred[weights.indexOf(best)] as ContentCoding.Coding)
      expect(ContentCoding.negotiate(field)).toBe(expected)
    },
    { fastCheck: { numRuns: 2_000 } }
  )

  it.prop("never throws, whatever the text", [Arbitraries.binaryString()], ([field]) => {
    expect(["br", "gzip", "identity"]).toContain(ContentCoding.negotiate(field))
  })
})
