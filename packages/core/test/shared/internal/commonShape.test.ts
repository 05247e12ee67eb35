// The fast check of the common request shape gives the request schema's verdict: whatever it takes, the
// schema takes as the same request, and `parseRequest` (the fast check, then the schema) refuses exactly
// what the schema refuses.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as GetFileData from "../../../src/read/GetFileData.js"
import { commonShape } from "../../../src/shared/internal/commonShape.js"

// Bodies as JSON.parse makes them, built from text so `__proto__` and repeated keys stay own keys.
const jsonValue = FastCheck.oneof(
  FastCheck.constantFrom("", "contact", "alice-key-1", " ", "\u0000", 0, 1, true, false, null, [], {}, ["k"]),
  FastCheck.constantFrom("😀".repeat(256), "😀".repeat(257), "x".repeat(256), "x".repeat(257), "a\ud800", "\udc00"),
  FastCheck.string(),
  FastCheck.string({ unit: FastCheck.oneof(FastCheck.char16bits(), FastCheck.constantFrom("😀", "\u0000")) }),
  FastCheck.jsonValue({ maxDepth: 2 })
)
const member = FastCheck.tuple(
  FastCheck.oneof(
    FastCheck.constantFrom("fileId", "apiKey", "__proto__", "constructor", "fileid", ""),
    FastCheck.string()
  ),
  jsonValue
)
const body = FastCheck.oneof(
  {
    weight: 4,
    arbitrary: FastCheck.array(member, { maxLength: 4 }).map(
      (members) => `{${members.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(",")}}`
    )
  },
  { weight: 1, arbitrary: jsonValue.map((value) => JSON.stringify(value)) }
).map((text) => JSON.parse(text) as unknown)
const decodeBySchema = Schema.decodeUnknownEither(GetFileData.GetFileDataRequest)

describe("commonShape", () => {
  it.prop(
    "takes only what the request schema takes, as the same request",
    [body],
    ([parsed]) => {
      const fast = commonShape(parsed)
      if (fast === undefined) return
      const bySchema = decodeBySchema(parsed)
      expect(bySchema._tag).toBe("Right")
      if (bySchema._tag !== "Right") return
      expect(fast.fileId).toBe(bySchema.right.fileId)
      expect(Redacted.value(fast.apiKey)).toBe(Redacted.value(bySchema.right.apiKey))
    },
    { fastCheck: { numRuns: 5_000 } }
  )

  it.prop(
    "behind parseRequest, leaves the verdict and the request the schema's",
    [body],
    ([parsed]) => {
      const bySchema = decodeBySchema(parsed)
      const verdict = Effect.runSync(Effect.either(GetFileData.parseRequest(parsed)))
      expect(verdict._tag).toBe(bySchema._tag)
      if (verdict._tag === "Right" && bySchema._tag === "Right") {
        expect(verdict.right.fileId).toBe(bySchema.right.fileId)
        expect(Redacted.value(verdict.right.apiKey)).toBe(Redacted.value(bySchema.right.apiKey))
      }
    },
    { fastCheck: { numRuns: 5_000 } }
  )

  it("takes the common shape itself", () => {
    expect(commonShape({ fileId: "contact", apiKey: "alice-key-1" })?.fileId).toBe("contact")
    expect(commonShape({ fileId: "contact", apiKey: "alice-key-1", x: 1 })).toBeUndefined()
  })
})
