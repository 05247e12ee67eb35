// Statuses and framing RFC 9110 and RFC 9112 fix, on raw sockets against the service in this process: a
// request target over the limit (414), a coded request body (415), `Transfer-Encoding` in HTTP/1.0 (400),
// `Expect: 100-continue` without a body, and the close after a refused oversized chunked body (RFC 9112,
// section 9.6) that lets a client still sending read its 422.

import { mkdtempSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as InProcess from "./utils/InProcess.js"
import { parse, type Response } from "./utils/RawHttp.js"
import * as TestServer from "./utils/TestServer.js"

const KEY = "http-framing-key-51c0"
const fixture = {
  users: [{ id: "alice", apiKeys: [KEY] }],
  files: [{ id: "contact", userId: "alice", name: "Contact", creationDate: "2024-01-01T00:00:00.000Z" }]
}
const body = JSON.stringify({ fileId: "contact", apiKey: KEY })

/**
 * Sends `request` on a new connection; resolves with what came back once the server closes it, or once
 * `waitMillis` passed without a close (`closed` false).
 */
const exchange = (port: number, request: string | ReadonlyArray<string>, waitMillis = 2_000) =>
  new Promise<{ readonly text: string; readonly replies: Array<Response>; readonly closed: boolean }>((resolve) => {
    let text = ""
    const parts = typeof request === "string" ? [request] : request
    // Each part its own TCP segment: the next is written only after a pause.
    const writeFrom = (index: number) => {
      if (index >= parts.length || socket.destroyed) return
      socket.write(parts[index] ?? "")
      setTimeout(() => writeFrom(index + 1), 50)
    }
    const socket = connect({ port, host: "127.0.0.1", noDelay: true }, () => writeFrom(0))
    const settle = (closed: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ text, replies: parse(text), closed })
    }
    const timer = setTimeout(() => settle(false), waitMillis)
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => (text += chunk))
    socket.on("error", () => {})
    socket.on("close", () => settle(true))
  })

const expectProblem = (reply: Response | undefined, status: number, code: string) => {
  expect(reply?.status).toBe(status)
  expect(reply?.headers["content-type"]).toBe("application/problem+json")
  expect(reply?.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:-]{1,128}$/)
  expect(JSON.parse(reply?.body ?? "")).toMatchObject({ type: `urn:filedata:problem:${code}`, status, code })
}

describe("statuses and framing of RFC 9110 and 9112 (raw sockets, in process)", () => {
  let served: InProcess.Served | undefined
  let port = 0

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "filedata-framing-"))
    const env = { DATABASE_URL: `file:${join(dir, "filedata.db")}`, PORT: "0", HOST: "127.0.0.1" }
    await TestServer.importInto(env, fixture)
    served = await InProcess.serve({ ...env, RATE_LIMIT_MAX: "100000", RATE_LIMIT_IP_MAX: "100000" })
    port = Number(new URL(served.base).port)
  })
  afterAll(async () => {
    if (served !== undefined) await InProcess.stop(served)
  })

  it("a 20 KiB request target: 414 uri_too_long; a 20 KiB header field still 431", async () => {
    const target = `/health?${"a".repeat(20 * 1024)}`
    const long = await exchange(port, `GET ${target} HTTP/1.1\r\nHost: filedata.test\r\n\r\n`)
    expectProblem(long.replies[0], 414, "uri_too_long")
    expect(long.replies[0]?.headers.connection).toBe("close")
    expect(long.closed).toBe(true)
    // After a first request on the connection, the long target is still told from a header field.
    const second = await exchange(
      port,
      `GET /health HTTP/1.1\r\nHost: filedata.test\r\n\r\nGET ${target} HTTP/1.1\r\nHost: filedata.test\r\n\r\n`
    )
    expect(second.replies.map((reply) => reply.status)).toEqual([200, 414])
    const field = await exchange(
      port,
      `GET /health HTTP/1.1\r\nHost: filedata.test\r\nX-Filler: ${"a".repeat(20 * 1024)}\r\n\r\n`
    )
    expectProblem(field.replies[0], 431, "request_header_fields_too_large")
  })

  it("a 20 KiB request target or header field in several TCP segments: still 414 and 431", async () => {
    const target = `/health?${"a".repeat(20 * 1024)}`
    const head = `GET ${target} HTTP/1.1\r\nHost: filedata.test\r\n\r\n`
    const splits = (text: string, count: number) =>
      Array.from({ length: count }, (_, index) =>
        text.slice(Math.floor((index * text.length) / count), Math.floor(((index + 1) * text.length) / count))
      )
    for (const count of [2, 5]) {
      const long = await exchange(port, splits(head, count))
      expectProblem(long.replies[0], 414, "uri_too_long")
      expect(long.replies[0]?.headers.connection).toBe("close")
      expect(long.closed).toBe(true)
      const field = await exchange(
        port,
        splits(`GET /health HTTP/1.1\r\nHost: filedata.test\r\nX-Filler: ${"a".repeat(20 * 1024)}\r\n\r\n`, count)
      )
      expectProblem(field.replies[0], 431, "request_header_fields_too_large")
      expect(field.closed).toBe(true)
    }
    // After a first request on the connection, in its own segment.
    const second = await exchange(port, [`GET /health HTTP/1.1\r\nHost: filedata.test\r\n\r\n`, ...splits(head, 3)])
    expect(second.replies.map((reply) => reply.status)).toEqual([200, 414])
  })

  it("a request target and header fields of 16 KiB each: read", async () => {
    const target = `/health?${"a".repeat(16 * 1024 - "/health?".length)}`
    // Names and values count, not the colons, spaces and CRLFs between them.
    const others = "Host".length + "filedata.test".length + "Connection".length + "close".length
    const filler = "a".repeat(16 * 1024 - others - "X-Filler".length)
    const { replies } = await exchange(
      port,
      `GET ${target} HTTP/1.1\r\nHost: filedata.test\r\nX-Filler: ${filler}\r\nConnection: close\r\n\r\n`
    )
    expect(replies[0]?.status).toBe(200)
    // One byte more of either is refused.
    const longer = await exchange(port, `GET ${target}a HTTP/1.1\r\nHost: filedata.test\r\n\r\n`)
    expectProblem(longer.replies[0], 414, "uri_too_long")
    const wider = await exchange(
      port,
      `GET /health HTTP/1.1\r\nHost: filedata.test\r\nX-Filler: ${filler}a\r\nConnection: close\r\n\r\n`
    )
    expectProblem(wider.replies[0], 431, "request_header_fields_too_large")
  })

  it("a 40 KiB head, over the parser's room: still 414 for its target, 431 for its header fields", async () => {
    const target = await exchange(port, `GET /health?${"a".repeat(40 * 1024)} HTTP/1.1\r\nHost: filedata.test\r\n\r\n`)
    expectProblem(target.replies[0], 414, "uri_too_long")
    expect(target.closed).toBe(true)
    const field = await exchange(
      port,
      `GET /health HTTP/1.1\r\nHost: filedata.test\r\nX-Filler: ${"a".repeat(40 * 1024)}\r\n\r\n`
    )
    expectProblem(field.replies[0], 431, "request_header_fields_too_large")
    expect(field.closed).toBe(true)
  })

  it("a request body with Content-Encoding other than identity: 415 with Accept-Encoding: identity, on each route", async () => {
    for (const [path, coding] of [
      ["/api/v1/file-data", "gzip"],
      ["/api/v1/file-data", "identity, br"],
      ["/api/v1/webhooks/list", "deflate"]
    ] as const) {
      const { replies, closed } = await exchange(
        port,
        `POST ${path} HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: application/json\r\nContent-Encoding: ${coding}\r\nContent-Length: ${body.length}\r\n\r\n${body}`
      )
      expectProblem(replies[0], 415, "unsupported_content_encoding")
      expect(replies[0]?.headers["accept-encoding"]).toBe("identity")
      expect(closed).toBe(true)
    }
    // Identity is the body as it is: read.
    const plain = await exchange(
      port,
      `POST /api/v1/file-data HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: application/json\r\nContent-Encoding: identity\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`
    )
    expect(plain.replies[0]?.status).toBe(200)
  })

  it("an HTTP/1.0 request with Transfer-Encoding: chunked is faulty framing: 400 bad_request, closed, not decoded", async () => {
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
    const { replies, closed } = await exchange(
      port,
      `POST /api/v1/file-data HTTP/1.0\r\nHost: filedata.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}`
    )
    // One reply, the connection closed after it: the chunked body was not read as a request.
    expect({ replies: replies.length, closed }).toEqual({ replies: 1, closed: true })
    expectProblem(replies[0], 400, "bad_request")
  })

  it("Expect: 100-continue on a bodiless GET /health: no 100 Continue, the 200 alone", async () => {
    const { text, replies } = await exchange(
      port,
      "GET /health HTTP/1.1\r\nHost: filedata.test\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    )
    expect(text.startsWith("HTTP/1.1 200 ")).toBe(true)
    expect(replies.map((reply) => reply.status)).toEqual([200])
    // With a body it will read, the request is still invited.
    const invited = await exchange(
      port,
      `POST /api/v1/file-data HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
      500
    )
    expect(invited.text.startsWith("HTTP/1.1 100 Continue\r\n")).toBe(true)
  })

  it("an oversized chunked body a client keeps sending: the 422 whole, a half-close, what follows read, not reset", async () => {
    const head =
      "POST /api/v1/file-data HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    const piece = Buffer.from(`${(16 * 1024).toString(16)}\r\n${"a".repeat(16 * 1024)}\r\n`)
    // Sends the body in pieces, past the 64 KiB limit, and goes on sending after the 422 has arrived: the
    // server has closed its sending half and still reads, so nothing the client writes is reset.
    const attempt = () =>
      new Promise<{ readonly replies: Array<Response>; readonly ended: boolean; readonly error?: string }>(
        (resolve) => {
          let text = ""
          let ended = false
          let error: string | undefined
          // 256 KiB before the 422 has come, 256 KiB after it, then the end of the sending half.
          const send = (bytes: number, then: () => void) => {
            let sent = 0
            const more = () => {
              while (error === undefined && sent < bytes) {
                sent += piece.length
                if (!socket.write(piece)) {
                  socket.once("drain", more)
                  return
                }
              }
              then()
            }
            more()
          }
          const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true }, () => {
            socket.write(head)
            send(256 * 1024, () => {
              const afterResponse = () => send(256 * 1024, () => socket.end())
              if (parse(text).length > 0) afterResponse()
              else socket.once("end", afterResponse)
            })
          })
          socket.setEncoding("latin1")
          socket.on("data", (chunk: string) => (text += chunk))
          socket.on("end", () => (ended = true))
          socket.on("error", (cause: NodeJS.ErrnoException) => (error = cause.code ?? cause.message))
          socket.on("close", () => resolve({ replies: parse(text), ended, ...(error === undefined ? {} : { error }) }))
        }
      )
    for (let round = 0; round < 8; round++) {
      const { replies, ended, error } = await attempt()
      expect(error, `round ${round}`).toBeUndefined()
      expect(ended).toBe(true)
      expect(replies, `round ${round}`).toHaveLength(1)
      expectProblem(replies[0], 422, "payload_too_large")
      expect(replies[0]?.headers.connection).toBe("close")
    }
  })
})
