// HTTP/1.1 at its edges, on raw sockets against the built server as a process: `Expect: 100-continue`, request
// targets in absolute form, and the requests refused before any route (400, 408, 414, 417, 431), each answered
// as a problem document with the header fields every reply carries.

import type { ChildProcess } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Processes } from "@filedata/testing"
import { parse, type Response } from "./utils/RawHttp.js"
import * as TestServer from "./utils/TestServer.js"

const { finish, killLeftovers, listening, startBuilt } = Processes

const KEY = "protocol-edges-key-7d2e"
const fixture = {
  users: [{ id: "alice", apiKeys: [KEY] }],
  files: [
    {
      id: "contact",
      userId: "alice",
      name: "Contact",
      creationDate: "2024-01-01T00:00:00.000Z",
      submissions: [{ createdDate: "2024-01-02T09:30:00.000Z", content: { email: "a@example.com" } }]
    }
  ]
}
const body = JSON.stringify({ fileId: "contact", apiKey: KEY })

/**
 * Opens a connection and sends `request` (an array: each part its own TCP segment, after a pause); `followUp`
 * may send more once the responses so far satisfy it. Resolves with every response and whether the server closed
 * the connection, once it closes it or `done` holds.
 */
const exchange = (
  port: number,
  request: string | Buffer | ReadonlyArray<string>,
  options?: {
    readonly followUp?: { readonly when: (responses: Array<Response>) => boolean; readonly send: string }
    readonly done?: (responses: Array<Response>) => boolean
  }
) =>
  new Promise<{ readonly responses: Array<Response>; readonly closedByServer: boolean }>((resolve) => {
    const parts = Array.isArray(request) ? request : [request]
    const writeFrom = (index: number) => {
      if (index >= parts.length || socket.destroyed) return
      socket.write(parts[index])
      setTimeout(() => writeFrom(index + 1), 50)
    }
    const socket = connect({ port, host: "127.0.0.1", noDelay: true }, () => writeFrom(0))
    let received = ""
    let sent = false
    let settled = false
    const settle = (closedByServer: boolean) => {
      if (settled) return
      settled = true
      resolve({ responses: parse(received), closedByServer })
      socket.destroy()
    }
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => {
      received += chunk
      const responses = parse(received)
      if (options?.followUp !== undefined && !sent && options.followUp.when(responses)) {
        sent = true
        socket.write(options.followUp.send)
      }
      if (options?.done?.(responses) === true) settle(false)
    })
    socket.on("error", () => {})
    socket.on("close", () => settle(true))
  })

const post = (target: string, headers: string, content = body) =>
  `POST ${target} HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(content)}\r\n${headers}\r\n${content}`

/** Every reply's common header fields, and a problem document of `status` and `code`. */
const expectProblem = (response: Response | undefined, status: number, code: string) => {
  expect(response?.status).toBe(status)
  expect(response?.headers["content-type"]).toBe("application/problem+json")
  expect(response?.headers["x-content-type-options"]).toBe("nosniff")
  expect(response?.headers["cache-control"]).toBe("no-store")
  expect(response?.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:-]{1,128}$/)
  const problem = JSON.parse(response?.body ?? "")
  expect(problem).toMatchObject({ type: `urn:filedata:problem:${code}`, status, code })
  expect(typeof problem.title).toBe("string")
  expect(typeof problem.detail).toBe("string")
}

const expectFile = (response: Response | undefined) => {
  expect(response?.status).toBe(200)
  expect(JSON.parse(response?.body ?? "")).toMatchObject({
    name: "Contact",
    submissions: [{ content: { email: "a@example.com" } }]
  })
}

describe("HTTP/1.1 edges on raw sockets (real processes)", () => {
  let port = 0
  let child: ChildProcess | undefined
  let closed: Promise<{ code: number | null; stdout: string; stderr: string }> | undefined

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "filedata-protocol-"))
    const env = {
      DATABASE_URL: `file:${join(dir, "filedata.db")}`,
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      HTTP_HEADERS_TIMEOUT_MS: "500",
      HTTP_FIRST_REQUEST_TIMEOUT_MS: "600000"
    }
    await TestServer.importInto(env, fixture)
    child = startBuilt("server", [], env)
    closed = finish(child)
    port = Number(new URL(await listening(child)).port)
  }, 180_000)

  afterAll(killLeftovers)

  describe("Expect: 100-continue", () => {
    it("an oversized body is refused before it is invited: 422 payload_too_large, no 100, the connection closed", async () => {
      const { responses, closedByServer } = await exchange(
        port,
        "POST /api/v1/file-data HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n"
      )
      expect(responses).toHaveLength(1)
      expectProblem(responses[0], 422, "payload_too_large")
      expect(responses[0]?.headers.connection).toBe("close")
      expect(closedByServer).toBe(true)
    })

    it("a body of the wrong type or charset is refused before it is invited: 422 unsupported_media_type, no 100", async () => {
      for (const contentType of ["text/plain", "application/json; charset=latin1"]) {
        const { responses, closedByServer } = await exchange(
          port,
          `POST /api/v1/file-data HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: ${contentType}\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n`
        )
        expect(responses, contentType).toHaveLength(1)
        expectProblem(responses[0], 422, "unsupported_media_type")
        expect(closedByServer).toBe(true)
      }
    })

    it("an acceptable request is invited: 100 Continue, then the body, then 200", async () => {
      const { responses } = await exchange(
        port,
        `POST /api/v1/file-data HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
        { followUp: { when: (responses) => responses[0]?.status === 100, send: body } }
      )
      expect(responses.map((response) => response.status)).toEqual([100, 200])
      expectFile(responses[1])
    })
  })

  describe("request targets in absolute form (RFC 9112, section 3.2.2)", () => {
    it("route by their path, on the operation and on every other route", async () => {
      const operation = await exchange(port, post("http://filedata.test/api/v1/file-data", "Connection: close\r\n"))
      expectFile(operation.responses[0])
      expect(operation.responses[0]?.headers.ratelimit).toMatch(/client-address/)
      const withQuery = await exchange(
        port,
        post("HTTP://other.test:8080/api/v1/file-data?x=1", "Connection: close\r\n")
      )
      expectFile(withQuery.responses[0])

      const health = await exchange(
        port,
        "GET http://filedata.test/health HTTP/1.1\r\nHost: filedata.test\r\nConnection: close\r\n\r\n"
      )
      expect(health.responses[0]?.status).toBe(200)
      expect(JSON.parse(health.responses[0]?.body ?? "")).toEqual({
        status: "ok",
        rateLimiter: "memory",
        webhookDelivery: true
      })

      const wrongMethod = await exchange(
        port,
        "GET http://filedata.test/api/v1/file-data HTTP/1.1\r\nHost: filedata.test\r\nConnection: close\r\n\r\n"
      )
      expectProblem(wrongMethod.responses[0], 405, "method_not_allowed")
      expect(wrongMethod.responses[0]?.headers.allow).toBe("POST")

      const unknown = await exchange(port, post("http://filedata.test/api/v1/file-data/", "Connection: close\r\n"))
      expectProblem(unknown.responses[0], 404, "not_found")
    })
  })

  describe("requests refused before any route: problem documents, then the connection closed", () => {
    it("a request line that is not HTTP: 400 bad_request", async () => {
      const { responses, closedByServer } = await exchange(port, "GARBAGE\r\n\r\n")
      expectProblem(responses[0], 400, "bad_request")
      expect(responses[0]?.headers.connection).toBe("close")
      expect(closedByServer).toBe(true)
    })

    it("after a reply on a kept-alive connection, the next request malformed: 200, then 400 bad_request", async () => {
      const { responses, closedByServer } = await exchange(
        port,
        `${post("/api/v1/file-data", "")}POST /api/v1/file-data HTTP/1.1\r\nContent-Length: x\r\n\r\n`
      )
      expect(responses.map((response) => response.status)).toEqual([200, 400])
      expectProblem(responses[1], 400, "bad_request")
      expect(closedByServer).toBe(true)
    })

    it("a body whose chunked framing is broken, while its route reads it: 400 bad_request in place of its reply", async () => {
      const { responses, closedByServer } = await exchange(
        port,
        'POST /api/v1/file-data HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"fi\r\nzz\r\n'
      )
      expect(responses).toHaveLength(1)
      expectProblem(responses[0], 400, "bad_request")
      expect(closedByServer).toBe(true)
    })

    it("framing that reads two ways (Content-Length with Transfer-Encoding, two lengths): 400 bad_request", async () => {
      for (const framing of [
        "Content-Length: 5\r\nTransfer-Encoding: chunked",
        "Content-Length: 5\r\nContent-Length: 6"
      ]) {
        const { responses, closedByServer } = await exchange(
          port,
          `POST /api/v1/file-data HTTP/1.1\r\nHost: filedata.test\r\nContent-Type: application/json\r\n${framing}\r\n\r\n0\r\n\r\n`
        )
        expect(responses).toHaveLength(1)
        expectProblem(responses[0], 400, "bad_request")
        expect(closedByServer).toBe(true)
      }
    })

    it("a request target over 16 KiB, in several TCP segments: 414 uri_too_long", async () => {
      const target = `/health?${"a".repeat(20 * 1024)}`
      const { responses, closedByServer } = await exchange(port, [
        "GET /health?",
        target.slice("/health?".length, 10 * 1024),
        `${target.slice(10 * 1024)} HTTP/1.1\r\nHost: filedata.test\r\n\r\n`
      ])
      expectProblem(responses[0], 414, "uri_too_long")
      expect(responses[0]?.headers.connection).toBe("close")
      expect(closedByServer).toBe(true)
    })

    it("header fields over 16 KiB: 431 request_header_fields_too_large", async () => {
      const { responses, closedByServer } = await exchange(
        port,
        `GET /health HTTP/1.1\r\nHost: filedata.test\r\nX-Filler: ${"a".repeat(20_000)}\r\n\r\n`
      )
      expectProblem(responses[0], 431, "request_header_fields_too_large")
      expect(closedByServer).toBe(true)
    })

    it("an HTTP/1.1 request without Host: 400 bad_request", async () => {
      const { responses, closedByServer } = await exchange(
        port,
        "GET /health HTTP/1.1\r\nX-Request-Id: no-host\r\n\r\n"
      )
      expectProblem(responses[0], 400, "bad_request")
      expect(responses[0]?.headers["x-request-id"]).toBe("no-host")
      expect(closedByServer).toBe(true)
      // HTTP/1.0 has no such rule.
      const old = await exchange(port, "GET /health HTTP/1.0\r\n\r\n")
      expect(old.responses[0]?.status).toBe(200)
    })

    it("an expectation other than 100-continue: 417 expectation_failed", async () => {
      const { responses, closedByServer } = await exchange(
        port,
        "GET /health HTTP/1.1\r\nHost: filedata.test\r\nExpect: tea\r\n\r\n"
      )
      expectProblem(responses[0], 417, "expectation_failed")
      expect(closedByServer).toBe(true)
    })

    it("header fields that stop coming (HTTP_HEADERS_TIMEOUT_MS): 408 request_timeout", async () => {
      const { responses, closedByServer } = await exchange(port, "GET /health HTTP/1.1\r\nHost: filedata.test\r\n")
      expectProblem(responses[0], 408, "request_timeout")
      expect(closedByServer).toBe(true)
    })
  })

  it("each of those replies writes its request log line; SIGTERM still stops the server with exit 0", async () => {
    child?.kill("SIGTERM")
    const exit = await closed
    expect(exit?.code, exit?.stderr).toBe(0)
    const lines = (exit?.stdout ?? "")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line))
      .filter((line) => line.message === "request")
    for (const status of [400, 408, 414, 417, 431]) {
      expect(lines).toContainEqual(expect.objectContaining({ annotations: expect.objectContaining({ status }) }))
    }
    expect(lines).toContainEqual(
      expect.objectContaining({
        annotations: expect.objectContaining({ status: 200, method: "POST", path: "/api/v1/file-data" })
      })
    )
  })
})
