import { describe, expect, it } from "@effect/vitest"
import { FileDataError } from "@filedata/core"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as DuplicateMembers from "../src/DuplicateMembers.js"
import * as RequestBody from "../src/RequestBody.js"

// A JSON text built from its structure, with the pointers of the members it names twice known from that
// structure rather than from the text: objects are lists of members, names may repeat, and each name is
// written plainly or with every character escaped.
interface Built {
  readonly text: string
  readonly duplicates: ReadonlyArray<string>
}

const token = (name: string) => name.replaceAll("~", "~0").replaceAll("/", "~1")
const escaped = (name: string) =>
  `"${Array.from({ length: name.length }, (_, i) => `\\u${name.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")}"`

const name = fc.oneof(
  fc.constantFrom("a", "b", "fileId", "apiKey", "__proto__", "", "a/b", "~1", "é", "😀", "\u0000", '{"[:,'),
  fc.string({ maxLength: 3 })
)
const space = fc.constantFrom("", " ", "\n\t ")

const { value } = fc.letrec<{ value: Built; leaf: Built; array: Built; object: Built }>((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, tie("leaf"), tie("array"), tie("object")),
  leaf: fc
    .oneof(
      fc.string(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null)
    )
    .map((leaf) => ({ text: JSON.stringify(leaf), duplicates: [] })),
  array: fc.tuple(fc.array(tie("value"), { maxLength: 4 }), space).map(([items, ws]) => ({
    text: `[${ws}${items.map((item) => item.text).join(`${ws},`)}]`,
    duplicates: items.flatMap((item, i) => item.duplicates.map((pointer) => `/${i}${pointer}`))
  })),
  object: fc
    .tuple(fc.array(fc.tuple(name, fc.boolean(), tie("value")), { maxLength: 5 }), space)
    .map(([members, ws]) => {
      const seen = new Set<string>()
      const twice = new Set<string>()
      for (const [key] of members) (seen.has(key) ? twice : seen).add(key)
      return {
        text: `{${ws}${members
          .map(([key, plain, member]) => `${plain ? JSON.stringify(key) : escaped(key)}${ws}:${ws}${member.text}`)
          .join(`,${ws}`)}}`,
        duplicates: [
          ...[...twice].map((key) => `/${token(key)}`),
          ...members.flatMap(([key, , member]) => member.duplicates.map((pointer) => `/${token(key)}${pointer}`))
        ]
      }
    })
}))

const parse = (text: string) => RequestBody.parse(Buffer.from(text, "utf8"))

describe("RequestBody.parse", () => {
  it.prop(
    "refuses a text that names a member twice in any object, by pointer, and reads any other as JSON.parse does",
    [value],
    ([built]) => {
      const result = parse(built.text)
      if (built.duplicates.length === 0) {
        expect(Either.getOrThrow(result)).toEqual(JSON.parse(built.text))
        return
      }
      const refusal = Either.getLeft(result)
      expect(refusal._tag).toBe("Some")
      if (refusal._tag !== "Some") return
      expect(refusal.value.reason).toBe("InvalidPayload")
      expect(refusal.value.issues.every((issue) => issue.detail === "appears more than once")).toBe(true)
      const listed = refusal.value.issues.map((issue) => issue.pointer)
      // The same member of an object in an overwritten value and in the kept one share a pointer.
      expect(new Set(listed)).toEqual(new Set(built.duplicates))
    },
    { fastCheck: { numRuns: 3_000 } }
  )

  it.prop(
    "counting colons never hides a duplicate the full reading finds",
    [value],
    ([built]) => {
      expect(DuplicateMembers.find(built.text, JSON.parse(built.text))).toEqual(DuplicateMembers.scan(built.text))
    },
    { fastCheck: { numRuns: 3_000 } }
  )

  it.each([
    ['{"apiKey":"a","fileId":"f","apiKey":"b"}', ["/apiKey"]],
    ['{"apiKey":"a","\\u0061piKey":"b","fileId":"f"}', ["/apiKey"]],
    ['{"a":1,"a":2,"a":3,"b":[{"c/d~":1,"c/d~":2}],"b":0}', ["/a", "/b/0/c~1d~0", "/b"]],
    ['[{"x":{"__proto__":1,"__proto__":2}}]', ["/0/x/__proto__"]],
    ['{"":1,"":2}', ["/"]],
    ['{"a\\"b":1,"a\\"b":2,"s":"\\\\\\"{\\"x\\":1,\\"x\\":2}"}', ['/a"b']]
  ] as const)("names each repeated member once, in the order found: %s", (text, pointers) => {
    const refusal = Either.getLeft(parse(text))
    expect(refusal._tag === "Some" ? refusal.value.issues.map((issue) => issue.pointer) : refusal).toEqual(pointers)
  })

  it.each([
    '{"fileId":"urn:file:1","apiKey":"k:e:y"}',
    '{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}',
    '{"a":"\\"a\\":1,"}',
    '"\\"a\\":1,\\"a\\":2"',
    "[]"
  ])("accepts %s, which repeats no member of one object", (text) => {
    expect(Either.isRight(parse(text))).toBe(true)
  })

  it("lists 20 repeated members and counts the rest, and stops at long pointers", () => {
    const many = `{${Array.from({ length: 3000 }, (_, i) => `"m${i}":0,"m${i}":1`).join(",")}}`
    expect(many.length).toBeLessThan(RequestBody.MAX_BYTES)
    const refusal = Either.getLeft(parse(many))
    expect(refusal._tag === "Some" && refusal.value.issues.length).toBe(FileDataError.issueLimit)
    expect(refusal._tag === "Some" && refusal.value.omitted).toBe(2980)
    const parent = "p".repeat(3000)
    const nested = `{"${parent}":{"a":1,"a":2,"b":1,"b":2,"c":1,"c":2}}`
    const long = Either.getLeft(parse(nested))
    expect(long._tag === "Some" && long.value.issues.map((issue) => issue.pointer)).toEqual([`/${parent}/a`])
    expect(long._tag === "Some" && long.value.omitted).toBe(2)
  })

  it("refuses text that is not UTF-8 JSON, and the empty body", () => {
    expect(Either.getLeft(RequestBody.parse(Buffer.from([0x7b, 0xff, 0x7d])))._tag).toBe("Some")
    expect(Either.getLeft(parse(" \n"))._tag).toBe("Some")
    expect(Either.getLeft(parse('{"a":')).pipe((left) => left._tag === "Some" && left.value.reason)).toBe(
      "MalformedJson"
    )
  })

  const detailOf = (bytes: Uint8Array) =>
    Either.getLeft(RequestBody.parse(bytes)).pipe((left) =>
      left._tag === "Some" ? left.value.issues.map(({ detail, pointer }) => ({ detail, pointer })) : left
    )

  it.each([
    ['{"fileId":', "unexpected end of the document, expected a value at line 1, column 11"],
    ['{"fileId" "form"}', "unexpected character, expected : at line 1, column 11"],
    ['{\n  "fileId": "form",\n}', "unexpected character, expected a string key at line 3, column 1"],
    ['{"fileId": "form"} x', "unexpected character, expected the end of the document at line 1, column 20"],
    ["{'fileId': 1}", "unexpected character, expected a string key or } at line 1, column 2"],
    ['{"apiKey": secret}', "unexpected word, expected a value at line 1, column 12"],
    ['{"limit": 01}', "invalid number at line 1, column 11"],
    ['{"a": "\\q"}', "invalid escape in a string at line 1, column 8"],
    ['{"a": "\\u12g4"}', "invalid hexadecimal digit in a \\u escape at line 1, column 12"],
    ['{"a": "\t"}', "unescaped control character in a string at line 1, column 8"],
    ['{"a": "open', "the document ends inside a string at line 1, column 7"]
  ])("says where and why %s is not JSON, quoting none of it", (text, detail) => {
    expect(detailOf(new TextEncoder().encode(text))).toEqual([{ pointer: "", detail: `must be valid JSON: ${detail}` }])
  })

  it("keeps invalid UTF-8 apart from a syntax error", () => {
    expect(detailOf(Buffer.from([0x7b, 0xff, 0x7d]))).toEqual([{ pointer: "", detail: "must be valid UTF-8 JSON" }])
  })
})

describe("RequestBody.checkContentType", () => {
  it.each([
    "application/json",
    "Application/JSON",
    " application/json ",
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
    'application/json; charset="Utf-8"',
    "application/json ; CHARSET = utf-8",
    "application/json; q=1; x",
    "application/json;"
  ])("takes %s", (contentType) => {
    expect(RequestBody.checkContentType(contentType)).toBeUndefined()
  })

  it.each([
    ["application/json; charset=latin1", "Content-Type charset must be utf-8"],
    ["application/json; charset=utf-16", "Content-Type charset must be utf-8"],
    ["application/json; charset=utf8", "Content-Type charset must be utf-8"],
    ["application/json; charset=", "Content-Type charset must be utf-8"],
    ["application/json; charset", "Content-Type charset must be utf-8"],
    ['application/json; charset="utf-8', "Content-Type charset must be utf-8"],
    ["application/json; charset=utf-8; charset=iso-8859-1", "Content-Type charset must be utf-8"],
    ["text/plain; charset=utf-8", "Content-Type must be application/json"],
    ["application/jsonx", "Content-Type must be application/json"],
    [undefined, "Content-Type must be application/json"]
  ] as const)("refuses %s", (contentType, detail) => {
    const refusal = RequestBody.checkContentType(contentType)
    expect(refusal?.reason).toBe("UnsupportedMediaType")
    expect(refusal?.issues).toEqual([new FileDataError.Issue({ pointer: "", detail })])
  })
})
