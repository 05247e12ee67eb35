import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Schema from "effect/Schema"
import * as ClientAddress from "../src/ClientAddress.js"

// The rule as the contract states it, written the obvious way: the last non-empty entry, trimmed.
const lastEntry = (forwarded: string): string | undefined =>
  forwarded
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    .at(-1)

const Entry = Schema.Union(
  Schema.Literal("10.0.0.1", "::ffff:192.0.2.7", "2001:db8::1", "", " ", "  198.51.100.9  ", "unknown"),
  Schema.String
)
const Forwarded = Schema.Array(Entry).pipe(
  Schema.transform(Schema.String, { decode: (entries) => entries.join(","), encode: (text) => text.split(",") })
)

describe("ClientAddress", () => {
  it.prop(
    "with a trusted proxy, the last non-empty X-Forwarded-For entry, else the socket's peer",
    [Arbitrary.make(Forwarded)],
    ([forwarded]) => {
      const expected = lastEntry(forwarded) ?? "203.0.113.5"
      const normalized = expected.startsWith("::ffff:") ? expected.slice(7) : expected
      expect(ClientAddress.of({ "x-forwarded-for": forwarded }, "::ffff:203.0.113.5", true)).toBe(normalized)
    },
    { fastCheck: { numRuns: 2_000 } }
  )

  it("ignores X-Forwarded-For unless the proxy is trusted", () => {
    expect(ClientAddress.of({ "x-forwarded-for": "10.0.0.1" }, "::ffff:127.0.0.1", false)).toBe("127.0.0.1")
    expect(ClientAddress.of({}, undefined, false)).toBe("unknown")
  })

  it("reads repeated X-Forwarded-For headers as one list", () => {
    const headers = { "x-forwarded-for": ["192.0.2.1, 10.0.0.1", "10.0.0.2 ,"] } as never
    expect(ClientAddress.of(headers, "127.0.0.1", true)).toBe("10.0.0.2")
  })
})
