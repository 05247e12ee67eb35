// Compressed replies of the real server, in this process (docs/api.md#compression): the coding negotiated from
// Accept-Encoding, each compressed body decoding to exactly the bytes a client that asks for nothing gets, and a
// big compressed reply streamed as its pages are read.

import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { request as httpRequest, type IncomingMessage } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { brotliDecompressSync, createGunzip, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqliteFiles } from "@filedata/testing"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const { connect } = SqliteFiles

const KEY = "compression-test-key"

// Random text compresses about 1.7 times: a big reply is still megabytes once compressed.
const submissions = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ({
    createdDate: new Date(Date.UTC(2024, 0, 1) + (from + i) * 1000).toISOString(),
    content: { n: String(from + i), blob: randomBytes(150).toString("base64") }
  }))

const file = (id: string, count: number) => ({
  id,
  userId: "alice",
  name: `File ${id}`,
  creationDate: "2024-01-01T00:00:00.000Z",
  publicAvailability: true,
  VisitCounter: 3,
  submissions: submissions(count)
})

const BIG = 60_000
const fixture = {
  users: [{ id: "alice", apiKeys: [KEY] }],
  // "one-page": one page of rows, long enough to be joined as bytes rather than text, still one piece.
  files: [file("tiny", 1), file("one-piece", 40), file("one-page", 600), file("pieces", 2_000), file("big", BIG)]
}

// The bytes the contract fixes for a file: the File shape, fields in order, submissions ascending.
const expected = (id: string): string => {
  const entry = fixture.files.find((candidate) => candidate.id === id)
  if (entry === undefined) throw new Error(`no file ${id} in the fixture`)
  return JSON.stringify({
    name: entry.name,
    creationDate: entry.creationDate,
    publicAvailability: entry.publicAvailability,
    SubmissionCounter: entry.submissions.length,
    VisitCounter: entry.VisitCounter,
    submissions: entry.submissions
  })
}

interface Raw {
  readonly status: number
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
}

/** The operation over node:http, which leaves the body as sent (fetch would decode it). */
const post = (base: string, body: unknown, headers: Record<string, string> = {}) =>
  new Promise<Raw>((resolve, reject) => {
    const req = httpRequest(`${base}/api/v1/file-data`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers }
    })
    req.on("error", reject)
    req.on("response", (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on("error", reject)
    })
    req.end(typeof body === "string" ? body : JSON.stringify(body))
  })

const decode = (reply: Raw): string => {
  const coding = reply.headers["content-encoding"]
  if (coding === undefined) return reply.body.toString("utf8")
  if (coding === "gzip") return gunzipSync(reply.body).toString("utf8")
  if (coding === "br") return brotliDecompressSync(reply.body).toString("utf8")
  throw new Error(`unexpected Content-Encoding ${coding}`)
}

let dir = ""
let env: Record<string, string> = {}
let base = ""
let server: InProcess.Served | undefined

describe("compressed replies", () => {
  // One server for the file: the streaming case, which rewrites the last submission, comes last.
  afterAll(async () => {
    if (server !== undefined) await InProcess.stop(server)
  })
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "filedata-compression-"))
    env = { DATABASE_URL: `file:${join(dir, "filedata.db")}`, PORT: "0", HOST: "127.0.0.1" }
    await TestServer.importInto(env, fixture)
    server = await InProcess.serve({ ...env, RATE_LIMIT_MAX: "100000", RATE_LIMIT_IP_MAX: "100000" })
    base = server.base
  }, 180_000)

  it("asking for nothing gets exactly the identity bytes; gzip and br decode to those bytes", async () => {
    for (const id of ["tiny", "one-piece", "one-page", "pieces"]) {
      const plain = await post(base, { fileId: id, apiKey: KEY })
      expect(plain.status).toBe(200)
      expect(plain.headers["content-encoding"]).toBeUndefined()
      expect(plain.headers.vary).toBe("Accept-Encoding")
      expect(plain.body.toString("utf8")).toBe(expected(id))
      for (const coding of ["gzip", "br"]) {
        const reply = await post(base, { fileId: id, apiKey: KEY }, { "accept-encoding": coding })
        expect(reply.status).toBe(200)
        expect(reply.headers.vary).toBe("Accept-Encoding")
        expect(decode(reply)).toBe(expected(id))
        if (id === "tiny") {
          // Under about 1 KiB: sent as it is.
          expect(reply.headers["content-encoding"]).toBeUndefined()
          expect(reply.body.equals(plain.body)).toBe(true)
        } else {
          expect(reply.headers["content-encoding"]).toBe(coding)
          expect(reply.body.length).toBeLessThan(plain.body.length)
        }
        if (id === "pieces") expect(reply.headers["transfer-encoding"]).toBe("chunked")
        else expect(reply.headers["content-length"]).toBe(String(reply.body.length))
      }
    }
  }, 60_000)

  it("honours the weights of Accept-Encoding", async () => {
    const cases: ReadonlyArray<readonly [string, string | undefined]> = [
      ["identity", undefined],
      ["", undefined],
      ["gzip;q=0.5, br;q=0.4", "gzip"],
      ["gzip;q=0.4, br;q=0.5", "br"],
      ["GZIP", "gzip"],
      ["br;q=0, *", "gzip"],
      ["gzip;q=0, br;q=0", undefined],
      ["identity;q=1, gzip;q=0.5", undefined],
      ["deflate, compress", undefined],
      // Identity refused and nothing else acceptable: the field is disregarded (docs/api.md#compression).
      ["identity;q=0", undefined],
      ["*;q=0", undefined],
      ["gzip;q=2, br;q=nonsense", undefined]
    ]
    for (const [field, coding] of cases) {
      const reply = await post(base, { fileId: "one-piece", apiKey: KEY }, { "accept-encoding": field })
      expect([field, reply.headers["content-encoding"]]).toEqual([field, coding])
      expect(decode(reply)).toBe(expected("one-piece"))
      expect(reply.headers.vary).toBe("Accept-Encoding")
    }
  }, 60_000)

  it("every reply of the operation carries Vary, problems uncompressed", async () => {
    const problems: ReadonlyArray<readonly [unknown, number]> = [
      ['{"fileId": ', 422],
      [{ fileId: "tiny" }, 422],
      [{ fileId: "tiny", apiKey: "no-such-key" }, 403],
      [{ fileId: "no-such-file", apiKey: KEY }, 404]
    ]
    for (const [body, status] of problems) {
      const reply = await post(base, body, { "accept-encoding": "br, gzip" })
      expect(reply.status).toBe(status)
      expect(reply.headers.vary).toBe("Accept-Encoding")
      expect(reply.headers["content-encoding"]).toBeUndefined()
      expect(JSON.parse(reply.body.toString("utf8"))).toMatchObject({ status })
    }
  }, 60_000)

  it("a big compressed reply streams: its first bytes arrive before its last page is read", async () => {
    // Read the first compressed bytes, then stop reading: the server can only go on as far as the socket's
    // buffers take, far less than the whole reply. The last submission, rewritten now by another connection, is in
    // the last page: it shows rewritten only if that page was read after the first bytes went out, which a
    // reply compressed whole before sending would not do. (An appended one would not show at all: a reply reads
    // up to the read point taken with the file.)
    let gotFirstBytes = () => {}
    const firstBytes = new Promise<void>((resolve) => (gotFirstBytes = resolve))
    let resume = () => {}
    const whole = new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${base}/api/v1/file-data`, {
        method: "POST",
        headers: { "content-type": "application/json", "accept-encoding": "gzip" }
      })
      req.on("error", reject)
      req.on("response", (res) => {
        const gunzip = createGunzip()
        const text: Array<Buffer> = []
        gunzip.on("data", (chunk: Buffer) => text.push(chunk))
        gunzip.on("end", () => resolve(Buffer.concat(text).toString("utf8")))
        gunzip.on("error", reject)
        res.on("error", reject)
        res.once("data", (chunk: Buffer) => {
          res.pause()
          gunzip.write(chunk)
          resume = () => {
            res.pipe(gunzip)
            res.resume()
          }
          gotFirstBytes()
        })
      })
      req.end(JSON.stringify({ fileId: "big", apiKey: KEY }))
    })
    await firstBytes
    const appended = { createdDate: "2030-01-01T00:00:00.000Z", content: { n: "rewritten after the first bytes" } }
    // Written by another connection, as a stored reply entry.
    const writer = connect(join(dir, "filedata.db"))
    writer
      .prepare("UPDATE submissions SET entry = ? WHERE seq = (SELECT max(seq) FROM submissions WHERE file_id = ?)")
      .run(JSON.stringify(appended), "big")
    writer.close()
    resume()
    const parsed = JSON.parse(await whole)
    expect(parsed.submissions).toHaveLength(BIG)
    expect(parsed.submissions.at(-1)).toEqual(appended)
  }, 60_000)
})
