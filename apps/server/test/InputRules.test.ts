// Bodies and text that could mean two things, against the server (in this process) over HTTP and the built CLI
// as a real process, on SQLite and, with TEST_DATABASE_URL, on PostgreSQL too. Requests are written on raw sockets, so the header fields and
// bytes the server gets are exactly those below (no client adds a charset or re-encodes an escape).

import { randomBytes } from "node:crypto"
import { connect } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ApiError, FileDataApi } from "@filedata/client"
import { FileDataError } from "@filedata/core"
import { Processes, TempDirectory, TestServices } from "@filedata/testing"
import * as Schema from "effect/Schema"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const { finish, killLeftovers, startBuilt } = Processes

const KEY = `input-rules-${randomBytes(8).toString("hex")}`
const LONG_OWNER = "😀".repeat(256)
const LONG_KEY = `${KEY}-long`
// The longest id, with characters of every UTF-8 width.
const LONGEST = `${"a".repeat(64)}${"é".repeat(64)}${"€".repeat(64)}${"😀".repeat(64)}`
const ODD_NAME = "e\u0301 \u202eRTL\u202c 𝒻\ufffd"

const fixture = {
  users: [
    { id: "user-1", apiKeys: [KEY] },
    { id: LONG_OWNER, apiKeys: [LONG_KEY] }
  ],
  files: [
    { id: "file-1", userId: "user-1", name: "Contact form", creationDate: "2024-01-01T00:00:00.000Z" },
    {
      id: LONGEST,
      userId: LONG_OWNER,
      name: ODD_NAME,
      creationDate: "2024-01-01T00:00:00.000Z",
      submissions: [{ createdDate: "2024-01-02T00:00:00.000Z", content: { "😀 e\u0301": "\u05e9\u05dc\u05d5\u05dd" } }]
    }
  ]
}

// The same document with every rule broken once; its import must write nothing.
const broken = {
  users: [{ id: "user-2\u0000", apiKeys: ["k\ud800"] }],
  files: [
    { id: "x".repeat(257), userId: "user-1", name: "n", creationDate: "2024-01-01T00:00:00.000Z" },
    { id: "file-3", userId: "user-1", name: "\udc00", creationDate: "2024-01-01T00:00:00.000Z" }
  ]
}

interface RawReply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly bytes: number
  readonly text: string
  readonly json: any
}

const dechunk = (body: Buffer): Buffer => {
  const parts: Array<Buffer> = []
  let at = 0
  for (;;) {
    const lineEnd = body.indexOf("\r\n", at)
    const size = Number.parseInt(body.subarray(at, lineEnd).toString("latin1"), 16)
    if (!(size > 0)) return Buffer.concat(parts)
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

/** `POST /api/v1/file-data` with `body` as given, on a socket of its own, read to its close. */
const post = (base: string, body: string | Buffer, contentType: string | undefined = "application/json") =>
  new Promise<RawReply>((resolve, reject) => {
    const { hostname, port } = new URL(base)
    const payload = typeof body === "string" ? Buffer.from(body, "utf8") : body
    const head = [
      "POST /api/v1/file-data HTTP/1.1",
      `Host: ${hostname}:${port}`,
      ...(contentType === undefined ? [] : [`Content-Type: ${contentType}`]),
      `Content-Length: ${payload.length}`,
      "Connection: close",
      "",
      ""
    ].join("\r\n")
    const socket = connect(Number(port), hostname)
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("error", reject)
    socket.on("close", () => {
      const raw = Buffer.concat(chunks)
      const split = raw.indexOf("\r\n\r\n")
      const [statusLine = "", ...lines] = raw.subarray(0, split).toString("latin1").split("\r\n")
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()])
      )
      const rest = raw.subarray(split + 4)
      const content = headers["transfer-encoding"] === "chunked" ? dechunk(rest) : rest
      const text = content.toString("utf8")
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      resolve({ status: Number(statusLine.split(" ")[1]), headers, bytes: content.length, text, json })
    })
    // Not ended: a client that half-closes gets its connection closed by Node before an answer that waits on
    // storage is written. `Connection: close` has the server close it once it has answered.
    socket.write(Buffer.concat([Buffer.from(head, "latin1"), payload]))
  })

const problem = (code: string, errors: ReadonlyArray<{ pointer: string; detail: string }>) => ({
  type: `urn:filedata:problem:${code}`,
  title: code === "validation_failed" ? "Validation failed" : "Unsupported media type",
  status: 422,
  detail: errors.map((error) => `${error.pointer === "" ? "body" : error.pointer}: ${error.detail}`).join("; "),
  code,
  errors
})

const fixed = {
  twice: "appears more than once",
  tooLong: "must be at most 256 characters",
  nul: "must not contain the character U+0000",
  illFormed: "must be well-formed Unicode (no lone surrogate)",
  charset: "Content-Type charset must be utf-8"
}

// The servers live through their block; whatever is left when the file ends is stopped.
afterAll(killLeftovers)

interface Storage {
  readonly name: string
  readonly databaseUrl: () => Promise<string>
  readonly release: () => Promise<void>
}

const sqlite: Storage = {
  name: "SQLite",
  databaseUrl: async () => `file:${join(TempDirectory.make("input-rules"), "filedata.db")}`,
  release: async () => {}
}

let database: Awaited<ReturnType<typeof TestServices.temporaryDatabase>> | undefined
const postgres: Storage = {
  name: "PostgreSQL (TEST_DATABASE_URL)",
  databaseUrl: async () => {
    database = await TestServices.temporaryDatabase("filedata_input")
    return database.url
  },
  release: async () => database?.drop()
}

if (TestServices.databaseUrl === undefined) {
  console.warn(`Input rules on PostgreSQL SKIPPED: ${TestServices.databaseUnset}`)
  describe("input rules on the real server: PostgreSQL", () => {
    it.skip(`SKIPPED: ${TestServices.databaseUnset}`, () => {})
  })
}

for (const storage of TestServices.databaseUrl === undefined ? [sqlite] : [sqlite, postgres]) {
  describe(`input rules on the real server: ${storage.name}`, () => {
    const dir = TempDirectory.make("input-rules")
    let env: Record<string, string> = {}
    let base = ""
    let server: InProcess.Served | undefined

    beforeAll(async () => {
      env = {
        DATABASE_URL: await storage.databaseUrl(),
        PORT: "0",
        HOST: "127.0.0.1",
        RATE_LIMIT_MAX: "1000000",
        RATE_LIMIT_IP_MAX: "1000000"
      }
      await TestServer.importInto(env, fixture)
      server = await InProcess.serve(env)
      base = server.base
    }, 120_000)

    afterAll(async () => {
      try {
        if (server !== undefined) await InProcess.stop(server)
      } finally {
        await storage.release()
      }
    }, 60_000)

    it("refuses a body that names a member twice, wherever and however written, by JSON Pointer", async () => {
      expect((await post(base, `{"fileId":"file-1","apiKey":"${KEY}"}`)).status).toBe(200)
      // The valid key first, another last: a reader keeping the first would let it through, JSON.parse the last.
      for (const [body, pointer] of [
        [`{"apiKey":"${KEY}","fileId":"file-1","apiKey":"other-key"}`, "/apiKey"],
        [`{"fileId":"file-1","apiKey":"other-key","\\u0061piKey":"${KEY}"}`, "/apiKey"],
        [`{"fileId":"file-1","fileId":"file-1","apiKey":"${KEY}"}`, "/fileId"],
        [`{"fileId":"file-1","apiKey":"${KEY}","x":[{"a/b":1,"a/b":2}]}`, "/x/0/a~1b"]
      ] as const) {
        const reply = await post(base, body)
        expect(reply.status, body).toBe(422)
        expect(reply.json).toEqual(problem("validation_failed", [{ pointer, detail: fixed.twice }]))
        expect(reply.text).not.toContain(KEY)
        expect(reply.text).not.toContain("other-key")
      }
    })

    it("refuses a charset other than utf-8 as an unsupported media type, and takes utf-8 however written", async () => {
      const body = `{"fileId":"file-1","apiKey":"${KEY}"}`
      for (const contentType of [
        "application/json; charset=latin1",
        "application/json;charset=utf-16",
        "application/json; charset=utf8",
        'application/json; charset="iso-8859-1"',
        "application/json; charset=utf-8; charset=latin1"
      ]) {
        const reply = await post(base, body, contentType)
        expect(reply.status, contentType).toBe(422)
        expect(reply.json).toEqual(problem("unsupported_media_type", [{ pointer: "", detail: fixed.charset }]))
      }
      for (const contentType of [
        "application/json; charset=utf-8",
        "Application/JSON;Charset=UTF-8",
        'application/json; charset="utf-8"',
        "application/json; foo=bar"
      ]) {
        expect((await post(base, body, contentType)).status, contentType).toBe(200)
      }
    })

    it("answers a body of 8,000 unknown members with a problem of a few KiB listing the first 20", async () => {
      // Three characters each, none integer-like (JavaScript puts those first, whatever the text's order).
      const name = (i: number) =>
        `${String.fromCharCode(97 + Math.floor(i / 1296))}${(i % 1296).toString(36).padStart(2, "0")}`
      const members = Array.from({ length: 8000 }, (_, i) => `"${name(i)}":0`)
      const body = `{"fileId":"file-1","apiKey":"${KEY}",${members.join(",")}}`
      expect(body.length).toBeGreaterThan(60 * 1024)
      expect(body.length).toBeLessThanOrEqual(64 * 1024)
      const reply = await post(base, body)
      expect(reply.status).toBe(422)
      expect(reply.bytes).toBeLessThan(2 * 1024)
      expect(reply.json.errors).toEqual(
        members.slice(0, 20).map((member) => ({ pointer: `/${member.slice(1, 4)}`, detail: "is not allowed" }))
      )
      expect(reply.json.omitted).toBe(7980)
      expect(reply.json.detail).toMatch(/^\/a00: is not allowed; .*; and 7980 more$/)
      // The typed client reads the same reply, within the cap it publishes.
      expect(ApiError.issueLimit).toBe(FileDataError.issueLimit)
      const decoded = Schema.decodeUnknownSync(FileDataApi.ValidationProblem)(reply.json)
      expect(decoded).toBeInstanceOf(ApiError.ValidationFailed)
      expect(decoded).toMatchObject({ code: "validation_failed", omitted: 7980 })
      // Twenty problems exactly leave nothing out, and say so by leaving `omitted` away.
      const twenty = await post(base, `{"fileId":"file-1","apiKey":"${KEY}",${members.slice(0, 20).join(",")}}`)
      expect(twenty.json.errors).toHaveLength(20)
      expect(twenty.json).not.toHaveProperty("omitted")
    })

    it("refuses a fileId over 256 characters with 422 naming it, and serves one of exactly 256", async () => {
      for (const fileId of ["f".repeat(257), "😀".repeat(257), "x".repeat(8000)]) {
        const reply = await post(base, JSON.stringify({ fileId, apiKey: KEY }))
        expect(reply.status).toBe(422)
        expect(reply.json).toEqual(problem("validation_failed", [{ pointer: "/fileId", detail: fixed.tooLong }]))
      }
      expect((await post(base, JSON.stringify({ fileId: "😀".repeat(256), apiKey: KEY }))).json.code).toBe(
        "file_not_found"
      )
      const found = await post(base, JSON.stringify({ fileId: LONGEST, apiKey: LONG_KEY }))
      expect(found.status).toBe(200)
      expect(Buffer.from(found.json.name, "utf8").equals(Buffer.from(ODD_NAME, "utf8"))).toBe(true)
      expect(found.json.submissions).toEqual([
        { createdDate: "2024-01-02T00:00:00.000Z", content: { "😀 e\u0301": "\u05e9\u05dc\u05d5\u05dd" } }
      ])
      // Another user's key gets the 403 of any other file, whatever the id's length.
      expect((await post(base, JSON.stringify({ fileId: LONGEST, apiKey: KEY }))).status).toBe(403)
    })

    it("refuses a lone surrogate or U+0000 in fileId or apiKey with 422, before the key is looked up", async () => {
      for (const [body, pointer, detail] of [
        [`{"fileId":"\\ud800","apiKey":"${KEY}"}`, "/fileId", fixed.illFormed],
        [`{"fileId":"file-1\\udfff","apiKey":"${KEY}"}`, "/fileId", fixed.illFormed],
        [`{"fileId":"file-1\\u0000","apiKey":"${KEY}"}`, "/fileId", fixed.nul],
        [`{"fileId":"file-1","apiKey":"${KEY}\\ud83d"}`, "/apiKey", fixed.illFormed],
        [`{"fileId":"file-1","apiKey":"${KEY}\\u0000"}`, "/apiKey", fixed.nul]
      ] as const) {
        const reply = await post(base, body)
        expect(reply.status, body).toBe(422)
        expect(reply.json).toEqual(problem("validation_failed", [{ pointer, detail }]))
        expect(reply.text).not.toContain(KEY)
      }
      // Raw bytes of a lone surrogate (CESU-8) are no UTF-8 at all.
      const cesu = Buffer.concat([
        Buffer.from('{"fileId":"'),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from(`","apiKey":"${KEY}"}`)
      ])
      expect((await post(base, cesu)).json.errors).toEqual([{ pointer: "", detail: "must be valid UTF-8 JSON" }])
      // A syntax error is named where it is, in the fixture reader's words.
      const secondLine = ` "apiKey":"${KEY}" `
      const broken = await post(base, `{"fileId":"file-1",\n${secondLine}"limit":1}`)
      expect(broken.status).toBe(422)
      expect(broken.json).toEqual(
        problem("validation_failed", [
          {
            pointer: "",
            detail: `must be valid JSON: unexpected character, expected , or } at line 2, column ${secondLine.length + 1}`
          }
        ])
      )
    })

    it("refuses a fixture breaking the text rules by JSON path, and writes none of it", async () => {
      const refused = await finish(startBuilt("cli", ["import", TempDirectory.write(dir, "broken.json", broken)], env))
      expect(refused.code).not.toBe(0)
      for (const line of [
        `$.users[0].id: ${fixed.nul}`,
        `$.users[0].apiKeys[0]: ${fixed.illFormed}`,
        `$.files[0].id: ${fixed.tooLong}`,
        `$.files[1].name: ${fixed.illFormed}`
      ]) {
        expect(refused.stderr).toContain(line)
      }
      expect((await post(base, JSON.stringify({ fileId: "file-3", apiKey: KEY }))).status).toBe(404)
    })

    it("refuses an append breaking the text rules by JSON path, and writes none of it", async () => {
      const at = "2024-01-03T00:00:00.000Z"
      const appended = TempDirectory.write(dir, "append.json", {
        files: [
          { id: "file-1", VisitCounter: 5, submissions: [{ createdDate: at, content: { k: "\u0000" } }] },
          { id: "x".repeat(257) },
          { id: LONGEST, submissions: [{ createdDate: at, content: { "\ud800": "v" } }] }
        ]
      })
      const refused = await finish(startBuilt("cli", ["append", appended], env))
      expect(refused.code).not.toBe(0)
      for (const line of [
        `$.files[0].submissions[0].content.k: ${fixed.nul}`,
        `$.files[1].id: ${fixed.tooLong}`,
        `$.files[2].submissions[0].content["\\ud800"]: name ${fixed.illFormed}`
      ]) {
        expect(refused.stderr).toContain(line)
      }
      const file = await post(base, JSON.stringify({ fileId: "file-1", apiKey: KEY }))
      expect(file.json).toMatchObject({ VisitCounter: 0, SubmissionCounter: 0, submissions: [] })
      expect((await post(base, JSON.stringify({ fileId: LONGEST, apiKey: LONG_KEY }))).json.submissions).toHaveLength(1)
    })
  })
}
