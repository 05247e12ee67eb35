// A request on the wire (`RequestSchema.wire`), the typed client's payload schema, takes exactly what the server
// takes: a body passes it exactly when the operation's own reading (`parseRequest`) takes it.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as GetFileData from "../../src/read/GetFileData.js"
import { FileId } from "../../src/shared/FileData.js"
import * as GetSubmissions from "../../src/sync/GetSubmissions.js"
import * as SubmissionCursor from "../../src/sync/SubmissionCursor.js"

const cursor = SubmissionCursor.encode(FileId.make("file-1"), "42")

// Values of the kinds each member takes, right and wrong, and a few of any JSON.
const value = FastCheck.oneof(
  FastCheck.constantFrom("", "file-1", "other", "a-key", " ", "\u0000", "a\ud800", "\udc00", 0, 1, 1.5, -1, true, null),
  FastCheck.constantFrom("😀".repeat(200), "😀".repeat(256), "😀".repeat(257), "x".repeat(256), "x".repeat(257)),
  FastCheck.constantFrom(
    "2024-01-01T00:00:00.000Z",
    "2024-02-01T01:00:00+01:00",
    "2024-01-01",
    "2024-02-30T00:00:00Z",
    "10000",
    cursor,
    `${cursor}x`,
    10_000,
    10_001,
    "10"
  ),
  FastCheck.integer({ min: -2, max: 10_002 }),
  FastCheck.string(),
  FastCheck.jsonValue({ maxDepth: 1 })
)
const name = FastCheck.oneof(
  { weight: 6, arbitrary: FastCheck.constantFrom("fileId", "apiKey", "since", "until", "after", "limit") },
  { weight: 1, arbitrary: FastCheck.constantFrom("x", "__proto__", "fileid", "") }
)
// Bodies as JSON.parse makes them, mostly with both required members.
const body = FastCheck.oneof(
  {
    weight: 8,
    arbitrary: FastCheck.tuple(
      FastCheck.constantFrom("file-1", "😀".repeat(200), "", "a\ud800"),
      FastCheck.constantFrom("a-key", ""),
      FastCheck.array(FastCheck.tuple(name, value), { maxLength: 3 })
    ).map(([fileId, apiKey, members]) =>
      JSON.parse(
        `{${[["fileId", fileId] as const, ["apiKey", apiKey] as const, ...members]
          .map(([key, member]) => `${JSON.stringify(key)}:${JSON.stringify(member)}`)
          .join(",")}}`
      )
    )
  },
  { weight: 1, arbitrary: value }
)

const agree = <A, I>(
  client: Schema.Schema<I>,
  server: (body: unknown) => Effect.Effect<A, unknown>
): ((body: unknown) => void) => {
  const encode = Schema.encodeUnknownEither(client)
  return (parsed) => {
    const accepted = Exit.isSuccess(Effect.runSyncExit(server(parsed)))
    expect(encode(parsed)._tag, JSON.stringify(parsed)).toBe(accepted ? "Right" : "Left")
  }
}

describe("the request schemas on the wire", () => {
  it("take an id of 200 emoji, which the server takes", () => {
    const payload = { fileId: "😀".repeat(200), apiKey: "a-key" }
    expect(Schema.encodeUnknownEither(GetFileData.RequestJson)(payload)._tag).toBe("Right")
    expect(Schema.encodeUnknownEither(GetFileData.RequestJson)({ ...payload, fileId: "😀".repeat(257) })._tag).toBe(
      "Left"
    )
  })

  it.prop(
    "getFileData: encode exactly the bodies the server accepts",
    [body],
    ([parsed]) => agree(GetFileData.RequestJson, GetFileData.parseRequest)(parsed),
    { fastCheck: { numRuns: 2_000 } }
  )

  it.prop(
    "getSubmissions: encode exactly the bodies the server accepts",
    [body],
    ([parsed]) => agree(GetSubmissions.RequestJson, GetSubmissions.parseRequest)(parsed),
    { fastCheck: { numRuns: 2_000 } }
  )
})
