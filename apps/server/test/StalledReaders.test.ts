// Clients that stop reading their reply: the real server abandons the reply once the socket has accepted
// nothing for HTTP_SEND_TIMEOUT_MS, compressed or not, and serves everyone else meanwhile.

import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { type Socket, connect as tcpConnect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import { Conditions, Processes } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Instrumentation from "../src/Instrumentation.js"
import * as TestServer from "./utils/TestServer.js"

const { killLeftovers, listening, startBuilt } = Processes

const KEY = "stalled-readers-key"

// Random text: even compressed, the big reply is several times what the socket buffers of both ends take.
const bigFile = (count: number) => ({
  id: "big",
  userId: "alice",
  name: "Big",
  creationDate: "2024-01-01T00:00:00.000Z",
  submissions: Array.from({ length: count }, (_, i) => ({
    createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    content: { n: String(i), blob: randomBytes(150).toString("base64") }
  }))
})

const fixture = {
  users: [{ id: "alice", apiKeys: [KEY] }],
  files: [bigFile(60_000), { id: "small", userId: "alice", name: "Small", creationDate: "2024-01-01T00:00:00.000Z" }]
}

const request = (fileId: string, headers: Record<string, string>) => {
  const body = JSON.stringify({ fileId, apiKey: KEY })
  const fields = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")
  return `POST /api/v1/file-data HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${fields}Content-Length: ${body.length}\r\n\r\n${body}`
}

interface Stalled {
  readonly sentAt: number
  /** Reads on; resolves with everything the server sent once it closed the connection. */
  readonly readToEnd: () => Promise<Buffer>
}

/** Sends a request for the big file and never reads: the socket is paused before any reply arrives. */
const stall = (port: number, headers: Record<string, string>) =>
  new Promise<Stalled>((resolve, reject) => {
    const socket: Socket = tcpConnect(port, "127.0.0.1", () => {
      socket.pause()
      socket.write(request("big", headers))
      resolve({
        sentAt: performance.now(),
        readToEnd: () =>
          new Promise<Buffer>((done) => {
            const chunks: Array<Buffer> = []
            socket.on("data", (chunk: Buffer) => chunks.push(chunk))
            socket.on("error", () => {})
            socket.on("close", () => done(Buffer.concat(chunks)))
            socket.resume()
          })
      })
    })
    socket.once("error", reject)
  })

/** One whole request on a connection of its own; the status line of its reply, or the error. */
const served = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = tcpConnect(port, "127.0.0.1", () => socket.end(request("small", { Connection: "close" })))
    let text = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk) => (text += chunk))
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
    socket.on("close", () => resolve(text.split("\r\n", 1)[0] ?? ""))
  })

afterEach(killLeftovers)

describe("stalled readers (real processes)", () => {
  let env: Record<string, string> = {}
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "filedata-stalled-"))
    env = { DATABASE_URL: `file:${join(dir, "filedata.db")}`, PORT: "0", HOST: "127.0.0.1" }
    await TestServer.importInto(env, fixture)
  }, 180_000)

  it("replies nobody reads are abandoned after HTTP_SEND_TIMEOUT_MS, compressed or not; others are served meanwhile and after", async () => {
    const SEND_TIMEOUT = 1_500
    const CONNECTIONS = 4
    const server = startBuilt("server", [], {
      ...env,
      HTTP_SEND_TIMEOUT_MS: String(SEND_TIMEOUT),
      HTTP_MAX_CONNECTIONS: String(CONNECTIONS),
      RATE_LIMIT_MAX: "100000",
      RATE_LIMIT_IP_MAX: "100000"
    })
    let stdout = ""
    server.stdout?.on("data", (chunk) => (stdout += chunk))
    const port = Number(new URL(await listening(server)).port)
    const abandonedIds = () =>
      stdout
        .split("\n")
        .filter((line) => line.includes("reply abandoned"))
        .map((line) => JSON.parse(line).annotations.requestId as string)

    const codings = ["identity", "gzip", "br"] as const
    const stalled = await Promise.all(
      codings.map((coding) =>
        stall(port, { "Accept-Encoding": coding, "X-Request-Id": `stalled-${coding}` }).then((client) => ({
          coding,
          client
        }))
      )
    )

    // The one connection left under the cap is served while the three replies are stuck.
    expect(await served(port)).toBe("HTTP/1.1 200 OK")
    expect(abandonedIds()).toEqual([])

    await Conditions.until(() => abandonedIds().length >= codings.length || undefined, {
      what: () => `replies abandoned: ${abandonedIds().join(", ")}`,
      limitMillis: 20_000
    })
    const abandonedAt = performance.now()
    expect(abandonedIds().sort()).toEqual(codings.map((coding) => `stalled-${coding}`).sort())
    // Never before the send timeout.
    for (const { client } of stalled) expect(abandonedAt - client.sentAt).toBeGreaterThanOrEqual(SEND_TIMEOUT)

    // Their slots are free again, once the server has closed them: as many clients as the cap allows are
    // served at once.
    await Conditions.passes(
      async () =>
        expect(await Promise.all(Array.from({ length: CONNECTIONS }, () => served(port)))).toEqual(
          Array.from({ length: CONNECTIONS }, () => "HTTP/1.1 200 OK")
        ),
      { limitMillis: 5_000 }
    )

    // What each stalled client was sent, read now: a reply begun and cut, never the end of a chunked body.
    for (const { coding, client } of stalled) {
      const received = await client.readToEnd()
      const head = received.subarray(0, received.indexOf("\r\n\r\n")).toString("latin1")
      expect(head).toMatch(/^HTTP\/1\.1 200 OK/)
      if (coding === "identity") expect(head).not.toMatch(/content-encoding/i)
      else expect(head).toMatch(new RegExp(`content-encoding: ${coding}`, "i"))
      expect(received.subarray(-5).toString("latin1")).not.toBe("0\r\n\r\n")
    }

    expect(server.exitCode).toBeNull()
    server.kill("SIGTERM")
  }, 60_000)
})

const inProcess = TestServer.layer({
  fixture: { users: fixture.users, files: [bigFile(30_000)] },
  http: { ...TestServer.httpLimits, sendTimeoutMillis: 300 }
})

layer(inProcess, { excludeTestServices: true })("stalled readers (in process)", (it) => {
  it.effect("an abandoned reply is counted in filedata_replies_abandoned_total", () =>
    Effect.gen(function* () {
      const before = (yield* Metric.value(Instrumentation.repliesAbandoned)).count
      const port = Number(new URL(yield* TestServer.url("/")).port)
      const client = yield* Effect.promise(() => stall(port, { "Accept-Encoding": "gzip" }))
      const after = yield* Conditions.eventually(
        Effect.filterOrFail(
          Effect.map(Metric.value(Instrumentation.repliesAbandoned), ({ count }) => count),
          (count) => count > before,
          () => "no reply abandoned yet"
        ),
        { limitMillis: 10_000 }
      )
      expect(after).toBe(before + 1)
      const received = yield* Effect.promise(() => client.readToEnd())
      expect(received.subarray(-5).toString("latin1")).not.toBe("0\r\n\r\n")
    })
  )
})
