// Property tests against the real server: thousands of generated requests (bodies, headers, methods, paths),
// each sent with node:http so raw bytes and chunked bodies reach the server as they are. Whatever is sent,
// the reply comes in time, is never a 5xx, is a problem document unless it is a 200, carries the common
// headers, and never repeats an API key that was sent.

import { randomBytes } from "node:crypto"
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as TestServer from "./utils/TestServer.js"

const REPLY_TIMEOUT_MILLIS = 5_000
const MAX_BYTES = 64 * 1024
const PATH = "/api/v1/file-data"

// Every key the test sends carries this recognisable shape, so any echo of one is found in a reply.
const SECRET = /secret-[0-9a-f]{16,}/g
const VALID_KEY = `secret-${randomBytes(16).toString("hex")}`
const FILE_ID = "file-1"

const fixture = {
  users: [{ id: "owner", apiKeys: [VALID_KEY] }],
  files: [
    {
      id: FILE_ID,
      userId: "owner",
      name: "Fuzz form",
      creationDate: "2024-01-01T00:00:00.000Z",
      publicAvailability: true,
      VisitCounter: 3,
      submissions: [
        { createdDate: "2024-01-02T00:00:00.000Z", content: JSON.parse('{"email":"a@example.com","__proto__":"p"}') },
        { createdDate: "2024-01-03T00:00:00.000Z", content: { message: "Hello ✓" } }
      ]
    }
  ]
}

const expectedFile = {
  name: "Fuzz form",
  creationDate: "2024-01-01T00:00:00.000Z",
  publicAvailability: true,
  SubmissionCounter: 2,
  VisitCounter: 3,
  submissions: [
    { createdDate: "2024-01-02T00:00:00.000Z", content: JSON.parse('{"email":"a@example.com","__proto__":"p"}') },
    { createdDate: "2024-01-03T00:00:00.000Z", content: { message: "Hello ✓" } }
  ]
}
const SIX_FIELDS = ["name", "creationDate", "publicAvailability", "SubmissionCounter", "VisitCounter", "submissions"]

// ---------------------------------------------------------------------------------------------------------
// Sending

interface Sent {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
  readonly chunked: boolean
}

interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly rawHeaders: ReadonlyArray<string>
  readonly body: Buffer
}

const send = (port: number, sent: Sent) =>
  Effect.async<Reply, Error>((resume) => {
    let settled = false
    const settle = (result: Effect.Effect<Reply, Error>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(result)
    }
    let responded = false
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: sent.method,
        path: sent.path,
        agent: false,
        headers: {
          ...sent.headers,
          ...(sent.chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(sent.body.length) })
        }
      },
      (res) => {
        responded = true
        const chunks: Array<Buffer> = []
        let ended = false
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          ended = true
          settle(
            Effect.succeed({
              status: res.statusCode ?? 0,
              headers: res.headers,
              rawHeaders: res.rawHeaders,
              body: Buffer.concat(chunks)
            })
          )
        })
        res.on("close", () => {
          if (!ended) settle(Effect.fail(new Error("the reply was cut short")))
        })
      }
    )
    const timer = setTimeout(() => {
      req.destroy()
      settle(Effect.fail(new Error(`no reply within ${REPLY_TIMEOUT_MILLIS} ms: a hang`)))
    }, REPLY_TIMEOUT_MILLIS)
    // The server may answer (and close) before it has read an oversized body; what counts is the reply.
    req.on("error", (error) => {
      if (!responded) settle(Effect.fail(error))
    })
    if (sent.chunked) {
      const third = Math.ceil(sent.body.length / 3)
      for (let at = 0; at < sent.body.length; at += third) req.write(sent.body.subarray(at, at + third))
      req.end()
    } else {
      req.end(sent.body)
    }
    return Effect.sync(() => {
      clearTimeout(timer)
      req.destroy()
    })
  })

// ---------------------------------------------------------------------------------------------------------
// What every reply must be

const ALLOWED = [200, 403, 404, 405, 422]
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

const sentSecrets = (sent: Sent): ReadonlyArray<string> => [
  ...new Set([
    ...(sent.body.toString("latin1").match(SECRET) ?? []),
    ...Object.values(sent.headers).flatMap((value) => value.match(SECRET) ?? [])
  ])
]

/** Checks what holds for every reply and returns the parsed body (undefined for HEAD). */
const checkReply = (sent: Sent, reply: Reply): any => {
  const context = `${sent.method} ${sent.path} -> ${reply.status} ${reply.body.toString("utf8").slice(0, 300)}`
  expect(reply.status, context).toBeLessThan(500)
  expect(ALLOWED, context).toContain(reply.status)
  expect(reply.headers["x-content-type-options"], context).toBe("nosniff")
  expect(reply.headers["cache-control"], context).toBe("no-store")
  expect(reply.headers["x-request-id"], context).toMatch(REQUEST_ID)
  expect(reply.headers["x-powered-by"], context).toBeUndefined()

  const text = reply.body.toString("latin1")
  const headerText = reply.rawHeaders.join("\n")
  for (const secret of [...sentSecrets(sent), VALID_KEY]) {
    expect(text.includes(secret), `${context}: the reply body repeats a key`).toBe(false)
    expect(headerText.includes(secret), `${context}: a reply header repeats a key`).toBe(false)
  }

  if (reply.status !== 200) {
    expect(reply.headers["content-type"], context).toBe("application/problem+json")
  }
  if (sent.method === "HEAD") return undefined
  if (reply.status !== 200 || reply.headers["content-type"]?.startsWith("application/json")) {
    const json = JSON.parse(reply.body.toString("utf8"))
    if (reply.status !== 200) {
      expect(typeof json, context).toBe("object")
      expect(json, context).not.toBeNull()
      for (const member of ["type", "title", "detail", "code"]) expect(typeof json[member], context).toBe("string")
      expect(json.status, context).toBe(reply.status)
      expect(json.type, context).toBe(`urn:filedata:problem:${json.code}`)
    }
    return json
  }
  return undefined
}

// An independent reading of the contract for POST /api/v1/file-data: the status and code a request must get.
const decoder = new TextDecoder("utf-8", { fatal: true })

// Every `charset` parameter, if any, says utf-8 (quoted or not, any case).
const utf8Charset = (contentType: string): boolean =>
  contentType
    .split(";")
    .slice(1)
    .every((parameter) => {
      const match = /^\s*charset\s*(?:=(.*))?$/i.exec(parameter)
      if (match === null) return true
      const value = (match[1] ?? "").trim()
      return /^(utf-8|"utf-8")$/i.test(value)
    })

// Whether an object of the text names a member twice, by a tokenizer of its own: strings and punctuation.
const repeatsAName = (text: string): boolean => {
  const stack: Array<Set<string> | null> = []
  let previous: string | undefined
  for (const [token] of text.matchAll(/"(?:[^"\\]|\\.)*"|[{}[\]:,]/g)) {
    if (token === "{") stack.push(new Set())
    else if (token === "[") stack.push(null)
    else if (token === "}" || token === "]") stack.pop()
    else if (token === ":" && previous?.startsWith('"')) {
      const names = stack.at(-1)
      const name = JSON.parse(previous) as string
      if (names?.has(name)) return true
      names?.add(name)
    }
    previous = token
  }
  return false
}

const wellFormedText = (text: string): boolean => !text.includes("\u0000") && !/\p{Cs}/u.test(text)

const oracle = (sent: Sent): { readonly status: number; readonly code?: string } => {
  const contentType = sent.headers["content-type"]
  if (contentType === undefined || (contentType.split(";", 1)[0] ?? "").trim().toLowerCase() !== "application/json") {
    return { status: 422, code: "unsupported_media_type" }
  }
  if (!utf8Charset(contentType)) return { status: 422, code: "unsupported_media_type" }
  if (sent.body.length > MAX_BYTES) return { status: 422, code: "payload_too_large" }
  let parsed: unknown
  try {
    const text = decoder.decode(sent.body)
    if (text.trim() === "") return { status: 422, code: "validation_failed" }
    parsed = JSON.parse(text)
    if (repeatsAName(text)) return { status: 422, code: "validation_failed" }
  } catch {
    return { status: 422, code: "validation_failed" }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { status: 422, code: "validation_failed" }
  }
  const record = parsed as Record<string, unknown>
  const keys = Object.keys(record).sort()
  const valid =
    keys.length === 2 &&
    keys[0] === "apiKey" &&
    keys[1] === "fileId" &&
    typeof record.apiKey === "string" &&
    record.apiKey !== "" &&
    wellFormedText(record.apiKey) &&
    typeof record.fileId === "string" &&
    record.fileId !== "" &&
    wellFormedText(record.fileId) &&
    Array.from(record.fileId).length <= 256
  if (!valid) return { status: 422, code: "validation_failed" }
  if (record.apiKey !== VALID_KEY) return { status: 403, code: "access_denied" }
  if (record.fileId !== FILE_ID) return { status: 404, code: "file_not_found" }
  return { status: 200 }
}

const expectFile = (json: any, context: string) => {
  expect(Object.keys(json), context).toEqual(SIX_FIELDS)
  expect(json, context).toEqual(expectedFile)
}

// ---------------------------------------------------------------------------------------------------------
// Arbitraries

const utf8 = (text: string) => Buffer.from(text, "utf8")

/** Header-safe text: visible ASCII, space, tab and Latin-1 bytes (what an HTTP/1.1 client may send). */
const headerText = (maxLength: number) =>
  fc
    .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.constant(0x09), fc.integer({ min: 0x80, max: 0xff })), {
      maxLength
    })
    .map((codes) => String.fromCharCode(...codes))

const guessedKey = fc
  .uint8Array({ minLength: 8, maxLength: 24 })
  .map((bytes) => `secret-${Buffer.from(bytes).toString("hex")}`)
const anyKey = fc.oneof(fc.constant(VALID_KEY), guessedKey)
const anyFileId = fc.oneof(
  fc.constant(FILE_ID),
  fc.constant("missing"),
  fc.string({ maxLength: 40 }),
  // Around the text rules: the longest id and one more, in ASCII and astral characters, U+0000, lone surrogates.
  fc.constantFrom(
    "f".repeat(256),
    "f".repeat(257),
    "😀".repeat(256),
    "😀".repeat(257),
    "file\u0000",
    "\ud800",
    "f\udfff"
  )
)
const requestText = fc.record({ fileId: anyFileId, apiKey: anyKey }).map((body) => JSON.stringify(body))

const oddKey = fc.oneof(
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "valueOf",
    "hasOwnProperty",
    "fileId",
    "apiKey",
    "FileId",
    "APIKEY",
    "fileId ",
    "",
    "a/b~c",
    "~0",
    "/",
    "\u0000",
    "🙂",
    "file\u0000Id"
  ),
  fc.string({ maxLength: 20 })
)
const oddValue = fc.oneof(fc.jsonValue({ maxDepth: 2 }), anyKey, fc.constant(FILE_ID))
// Written as text so `__proto__` is a real member, as a client would send it.
const oddObject = fc
  .array(fc.tuple(oddKey, oddValue), { maxLength: 8 })
  .map((entries) =>
    utf8(`{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(",")}}`)
  )

const keyInOddPlaces = fc.tuple(anyKey, fc.integer({ min: 0, max: 9 })).map(([key, which]) => {
  const k = JSON.stringify(key)
  const f = JSON.stringify(FILE_ID)
  return utf8(
    [
      `{"fileId":${k},"apiKey":${f}}`,
      `{"fileId":${f},"apiKey":${k},"extra":${k}}`,
      `[${k}]`,
      k,
      `{"fileId":${f},"apiKey":{"value":${k}}}`,
      `{"fileId":${f},"apiKey":[${k}]}`,
      `{"fileId":${f},"apiKey":${k}`,
      `{"apiKey":"x","fileId":${f},"apiKey":${k}}`,
      `{"__proto__":{"apiKey":${k}},"fileId":${f}}`,
      `{"fileId":${f},"apiKey":${k},"constructor":{"prototype":${k}}}`
    ][which] ?? ""
  )
})

const nearLimit = fc
  .tuple(
    anyKey,
    fc.integer({ min: MAX_BYTES - 64, max: MAX_BYTES + 64 }),
    fc.constantFrom("spaces", "field", "multibyte")
  )
  .map(([key, size, how]) => {
    const base = JSON.stringify({ fileId: FILE_ID, apiKey: key })
    if (how === "spaces") return utf8(`${base.slice(0, -1)}${" ".repeat(Math.max(0, size - base.length))}}`)
    const head = `${base.slice(0, -1)},"pad":"`
    const room = Math.max(0, size - head.length - 2)
    return utf8(`${head}${how === "field" ? "x".repeat(room) : "é".repeat(Math.floor(room / 2))}"}`)
  })

const badUtf8 = fc.constantFrom(
  [0xff],
  [0xfe],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0x80],
  [0xe2, 0x82],
  [0xf4, 0x90, 0x80, 0x80],
  [0xef, 0xbb, 0xbf]
)
const invalidUtf8 = fc.tuple(requestText, badUtf8, fc.nat()).map(([text, bad, index]) => {
  const bytes = utf8(text)
  const at = index % (bytes.length + 1)
  return Buffer.concat([bytes.subarray(0, at), Buffer.from(bad), bytes.subarray(at)])
})

const truncated = fc
  .tuple(
    fc.oneof(
      requestText,
      fc.jsonValue().map((value) => JSON.stringify(value))
    ),
    fc.nat()
  )
  .map(([text, index]) => utf8(text.slice(0, index % Math.max(1, text.length))))

const deepNesting = fc
  .tuple(fc.integer({ min: 1, max: 40_000 }), fc.constantFrom("array", "object", "field", "unclosed"), anyKey)
  .map(([depth, how, key]) => {
    switch (how) {
      case "array":
        return utf8(`${"[".repeat(depth)}${"]".repeat(depth)}`)
      case "object":
        return utf8(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`)
      case "field":
        return utf8(
          `{"fileId":"${FILE_ID}","apiKey":${JSON.stringify(key)},"n":${"[".repeat(depth)}${"]".repeat(depth)}}`
        )
      default:
        return utf8(`{"fileId":${"[".repeat(depth)}`)
    }
  })

const numberText = fc.oneof(
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.constantFrom("1e999", "-0", "0x10", "01", "1.", "-", "NaN", "Infinity", "123456789012345678901234567890", "1e-400")
)
const numbers = fc
  .tuple(numberText, anyKey, fc.boolean())
  .map(([number, key, inField]) => utf8(inField ? `{"fileId":${number},"apiKey":${JSON.stringify(key)}}` : number))

// Objects that repeat a name, at the top or deeper, written the same or with escapes.
const repeated = fc
  .tuple(anyKey, fc.constantFrom("apiKey", "fileId", "x", "__proto__"), fc.integer({ min: 0, max: 3 }))
  .map(([key, name, where]) => {
    const k = JSON.stringify(key)
    const f = JSON.stringify(FILE_ID)
    const twice = `{${JSON.stringify(name)}:1,"${name.replace(/^./, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)}":2}`
    return utf8(
      [
        `{"fileId":${f},"apiKey":${k},"apiKey":${k}}`,
        twice,
        `[{"a":[${twice}]}]`,
        `{"fileId":${f},"apiKey":${k},"n":${twice}}`
      ][where] ?? ""
    )
  })

const body = fc.oneof(
  fc.jsonValue().map((value) => utf8(JSON.stringify(value))),
  oddObject,
  repeated,
  requestText.map(utf8),
  keyInOddPlaces,
  nearLimit,
  invalidUtf8,
  fc.uint8Array({ maxLength: 4096 }).map((bytes) => Buffer.from(bytes)),
  truncated,
  deepNesting,
  numbers,
  fc.constant(Buffer.alloc(0))
)

const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      "application/json",
      "Application/JSON",
      "APPLICATION/JSON; charset=utf-8",
      "application/json;charset=latin1",
      'application/json; charset="UTF-8"',
      "application/json; charset=utf8",
      "application/json; charset=",
      "application/json; charset",
      "application/json; charset=iso-8859-1; charset=utf-8",
      'application/json; x="a;charset=utf-16"',
      "application/json ; q=1",
      " application/json\t",
      "text/plain",
      "application/jsonx",
      "application/problem+json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "",
      "application/ json",
      "application/json, text/plain",
      "text/json"
    ),
    headerText(60)
  ),
  { nil: undefined, freq: 4 }
)

const requestId = fc.option(fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,140}$/), headerText(200)), {
  nil: undefined
})
const forwardedFor = fc.option(
  fc.oneof(
    headerText(80),
    fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constant("unknown")), { maxLength: 5 }).map((ips) => ips.join(", "))
  ),
  { nil: undefined }
)
const extraHeaders = fc.dictionary(
  fc.constantFrom(
    "authorization",
    "x-api-key",
    "cookie",
    "accept",
    "accept-encoding",
    "forwarded",
    "x-real-ip",
    "origin",
    "user-agent",
    "x-http-method-override",
    "x-original-url"
  ),
  fc.oneof(
    headerText(60),
    anyKey,
    anyKey.map((key) => `Bearer ${key}`)
  ),
  { maxKeys: 4 }
)

const headers = fc
  .record({ contentType, requestId, forwardedFor, extra: extraHeaders })
  .map(({ contentType, extra, forwardedFor, requestId }) => {
    const result: Record<string, string> = { ...extra }
    if (contentType !== undefined) result["content-type"] = contentType
    if (requestId !== undefined) result["x-request-id"] = requestId
    if (forwardedFor !== undefined) result["x-forwarded-for"] = forwardedFor
    return result
  })

// ---------------------------------------------------------------------------------------------------------

// Each request's line goes to a logger that drops it: thousands of lines through vitest's console buried the
// suite's output. The route still takes the path of a server that logs its requests.
const server = TestServer.layer({ fixture }).pipe(Layer.provide(Logger.replace(Logger.defaultLogger, Logger.none)))
const portOf = Effect.map(TestServer.url("/"), (href) => Number(new URL(href).port))
const options = (numRuns: number) => ({ timeout: 60_000, fastCheck: { numRuns } })

layer(server, { excludeTestServices: true })("fuzz: the real server", (it) => {
  it.effect.prop(
    "any body and headers on POST /api/v1/file-data: the contract's status, a problem document, no key echoed",
    {
      body,
      headers,
      chunked: fc.boolean(),
      path: fc.constantFrom(PATH, `${PATH}?x=1`, `${PATH}?`, `${PATH}?apiKey=x`)
    },
    ({ body, chunked, headers, path }) =>
      Effect.gen(function* () {
        const sent: Sent = { method: "POST", path, headers, body, chunked }
        const reply = yield* send(yield* portOf, sent)
        const json = checkReply(sent, reply)
        const expected = oracle(sent)
        const context = `${reply.status} ${reply.body.toString("utf8").slice(0, 300)}`
        expect(reply.status, context).toBe(expected.status)
        if (expected.code !== undefined) expect(json.code, context).toBe(expected.code)
        if (reply.status === 200) expectFile(json, context)
        if (typeof headers["x-request-id"] === "string" && REQUEST_ID.test(headers["x-request-id"])) {
          expect(reply.headers["x-request-id"]).toBe(headers["x-request-id"])
        }
      }),
    options(1_800)
  )

  const knownPaths: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    [PATH, ["POST"]],
    ["/health", ["GET", "HEAD"]],
    ["/openapi.json", ["GET", "HEAD"]],
    ["/docs", ["GET", "HEAD"]]
  ]
  const expectedStatus = (method: string, path: string): number | undefined => {
    const known = knownPaths.find(([candidate]) => candidate === path)
    if (known !== undefined) return known[1].includes(method) ? undefined : 405
    // Paths are exact: a trailing slash or other letter case is another path.
    if (["/", "/api", "/api/v1", "/nope", "/api/v1/file-data.json", `${PATH}/`, "/API/V1/FILE-DATA"].includes(path)) {
      return 404
    }
    return undefined
  }

  it.effect.prop(
    "any method and path: a known status, a problem document for every error, the common headers",
    {
      method: fc.constantFrom("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"),
      path: fc.oneof(
        fc.constantFrom(
          PATH,
          "/health",
          "/openapi.json",
          "/docs",
          "/",
          "/api",
          "/api/v1",
          `${PATH}/`,
          "/API/V1/FILE-DATA",
          "/nope",
          "/api/v1/file-data.json",
          "//api/v1/file-data",
          "/api/v1/../v1/file-data",
          "/api/v1/file%2Ddata",
          "/%",
          "/%zz",
          "/health?%",
          "/docs/../health",
          `${PATH};x`,
          `${PATH}%00`
        ),
        fc.webPath(),
        fc.tuple(fc.webPath(), fc.webQueryParameters()).map(([path, query]) => `/${path.replace(/^\/*/, "")}?${query}`)
      ),
      body: fc.oneof(
        fc.constant(Buffer.alloc(0)),
        requestText.map(utf8),
        fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b))
      ),
      headers,
      chunked: fc.boolean()
    },
    ({ body, chunked, headers, method, path }) =>
      Effect.gen(function* () {
        const normalised = path === "" || !path.startsWith("/") ? `/${path}` : path
        const sent: Sent = { method, path: normalised, headers, body, chunked }
        const reply = yield* send(yield* portOf, sent)
        const json = checkReply(sent, reply)
        const context = `${method} ${normalised} -> ${reply.status}`
        const status = expectedStatus(method, normalised)
        if (status !== undefined) expect(reply.status, context).toBe(status)
        if (reply.status === 405) expect(reply.headers.allow, context).toBeDefined()
        if (method === "POST" && normalised.split("?", 1)[0] === PATH) {
          expect(reply.status, context).toBe(oracle(sent).status)
          if (reply.status === 200) expectFile(json, context)
        }
      }),
    options(700)
  )

  it.effect.prop(
    "a valid body with the owner's key gets 200 and exactly the six fields, whatever else is sent",
    {
      contentType: fc.constantFrom(
        "application/json",
        "Application/JSON",
        "application/json; charset=utf-8",
        "APPLICATION/JSON;charset=UTF-8",
        " application/json ",
        "application/json; anything=goes; x"
      ),
      headers: headers.map(({ "content-type": _, ...rest }) => rest),
      layout: fc.constantFrom("plain", "reversed", "spaced", "bom", "escaped"),
      chunked: fc.boolean(),
      path: fc.constantFrom(PATH, `${PATH}?fileId=other`, `${PATH}?`)
    },
    ({ chunked, contentType, headers, layout, path }) =>
      Effect.gen(function* () {
        const text = {
          plain: JSON.stringify({ fileId: FILE_ID, apiKey: VALID_KEY }),
          reversed: JSON.stringify({ apiKey: VALID_KEY, fileId: FILE_ID }),
          spaced: `\n\t { "fileId" : "${FILE_ID}" ,\r\n "apiKey" : "${VALID_KEY}" } \n`,
          bom: `\uFEFF${JSON.stringify({ fileId: FILE_ID, apiKey: VALID_KEY })}`,
          escaped: `{"file\\u0049d":"${FILE_ID.replace("f", "\\u0066")}","apiKey":"${VALID_KEY}"}`
        }[layout]
        const sent: Sent = {
          method: "POST",
          path,
          headers: { ...headers, "content-type": contentType },
          body: utf8(text ?? ""),
          chunked
        }
        const reply = yield* send(yield* portOf, sent)
        const json = checkReply(sent, reply)
        expect(reply.status, reply.body.toString("utf8").slice(0, 300)).toBe(200)
        expect(reply.headers["content-type"]).toMatch(/^application\/json/)
        expectFile(json, layout)
      }),
    options(600)
  )
})
