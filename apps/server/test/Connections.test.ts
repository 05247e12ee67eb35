// What one address can hold of the real server: idle connections from it are capped and closed when they send
// no request, so they cannot lock other clients out. Raw sockets against the built server as a process;
// 127.0.0.2 is another loopback address on Linux, a client of its own.

import type { ChildProcess } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Conditions, Processes } from "@filedata/testing"
import * as Connections from "../src/Connections.js"

const { finish, killLeftovers, listening, startBuilt } = Processes

describe("Connections.subjectOf", () => {
  it("an IPv4 address as itself, IPv4-mapped IPv6 as the IPv4 address, IPv6 by its /64 prefix", () => {
    expect(Connections.subjectOf("203.0.113.7")).toBe("203.0.113.7")
    expect(Connections.subjectOf("::ffff:203.0.113.7")).toBe("203.0.113.7")
    expect(Connections.subjectOf("::FFFF:203.0.113.7")).toBe("203.0.113.7")
    expect(Connections.subjectOf("2001:db8:0:1:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:0:1::/64")
    expect(Connections.subjectOf("2001:0DB8:0000:0001::1")).toBe("2001:db8:0:1::/64")
    expect(Connections.subjectOf("2001:db8:0:1::ffff")).toBe(Connections.subjectOf("2001:db8:0:1:ffff::"))
    expect(Connections.subjectOf("2001:db8::1")).toBe("2001:db8:0:0::/64")
    expect(Connections.subjectOf("2001:db8:0:2::1")).not.toBe(Connections.subjectOf("2001:db8:0:1::1"))
    expect(Connections.subjectOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(Connections.subjectOf("::1")).toBe("0:0:0:0::/64")
    expect(Connections.subjectOf(undefined)).toBe("")
  })
})

afterEach(killLeftovers)

interface Server {
  readonly port: number
  readonly child: ChildProcess
  readonly closed: Promise<{ code: number | null; stdout: string; stderr: string }>
}

const serve = async (env: Record<string, string>): Promise<Server> => {
  const dir = mkdtempSync(join(tmpdir(), "filedata-connections-"))
  const child = startBuilt("server", [], {
    DATABASE_URL: `file:${join(dir, "filedata.db")}`,
    PORT: "0",
    HOST: "127.0.0.1",
    ...env
  })
  const closed = finish(child)
  return { port: Number(new URL(await listening(child)).port), child, closed }
}

const stop = async ({ child, closed }: Server) => {
  child.kill("SIGTERM")
  const exit = await closed
  expect(exit.code, exit.stderr).toBe(0)
}

/** A socket that never sends a byte, and how it ended: closed by the server, with what it received. */
interface Idle {
  readonly socket: Socket
  readonly closed: Promise<{ readonly received: string }>
  isClosed: boolean
}

/** `count` connections from 127.0.0.1 that send nothing, opened in batches the listen backlog takes at once. */
const openIdle = async (port: number, count: number): Promise<Array<Idle>> => {
  const sockets: Array<Idle> = []
  for (let opened = 0; opened < count; opened += 200) {
    await Promise.all(
      Array.from(
        { length: Math.min(200, count - opened) },
        () =>
          new Promise<void>((resolve) => {
            const socket = connect({ port, host: "127.0.0.1" })
            let received = ""
            socket.setEncoding("latin1")
            socket.on("data", (chunk: string) => (received += chunk))
            socket.on("error", () => {})
            const idle: Idle = {
              socket,
              isClosed: false,
              closed: new Promise((closed) =>
                socket.on("close", () => {
                  idle.isClosed = true
                  closed({ received })
                  resolve()
                })
              )
            }
            socket.once("connect", () => resolve())
            sockets.push(idle)
          })
      )
    )
  }
  return sockets
}

/** `GET /health` from `localAddress`: its status, or the connection's error code. */
const health = (port: number, localAddress: string) =>
  new Promise<number | string>((resolve) => {
    const req = httpRequest({ host: "127.0.0.1", port, localAddress, path: "/health", agent: false }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
    req.end()
  })

describe("idle connections from one address (real processes)", () => {
  it("2,000 idle connections from one address hold 100 (the default cap); a client from another address gets its 200", async () => {
    // Only the first-request timeout lengthened, so that the idle connections stay for the whole test.
    const server = await serve({ HTTP_FIRST_REQUEST_TIMEOUT_MS: "600000" })
    const idle = await openIdle(server.port, 2_000)
    await Conditions.until(() => idle.filter((socket) => socket.isClosed).length >= 1_900 || undefined, {
      what: "the server closes 1,900 of them",
      limitMillis: 10_000
    })
    // The server closed the ones past the cap at once, without a byte; the first 100 it holds.
    const open = idle.filter((socket) => !socket.isClosed)
    expect(open).toHaveLength(100)
    for (const socket of idle.filter((socket) => socket.isClosed)) expect((await socket.closed).received).toBe("")

    // Before the cap, 1,000 of them (HTTP_MAX_CONNECTIONS) took every slot and every other client got ECONNRESET.
    expect(await health(server.port, "127.0.0.2")).toBe(200)
    // The attacking address itself gets no further connection while it holds its 100.
    expect(await health(server.port, "127.0.0.1")).toMatch(/ECONNRESET|EPIPE|socket hang up/)

    // Once it lets them go, it is served again (as soon as the server has seen them close).
    for (const socket of open) socket.socket.destroy()
    await Conditions.until(async () => (await health(server.port, "127.0.0.1")) === 200 || undefined, {
      what: "127.0.0.1 is served again",
      limitMillis: 10_000
    })
    await stop(server)
  }, 60_000)

  it("a connection that sends no complete request head in HTTP_FIRST_REQUEST_TIMEOUT_MS is closed; one that did stays", async () => {
    const server = await serve({ HTTP_FIRST_REQUEST_TIMEOUT_MS: "300", HTTP_KEEP_ALIVE_TIMEOUT_MS: "600000" })
    // Opened first and used at once: a kept-alive connection, which only the keep-alive timeout closes.
    const used = (await openIdle(server.port, 1))[0] as Idle
    const exchange = () =>
      new Promise<string>((resolve) => {
        let received = ""
        const onData = (chunk: string) => {
          received += chunk
          if (/\{"status":"ok"[^}]*\}$/.test(received)) {
            used.socket.off("data", onData)
            resolve(received)
          }
        }
        used.socket.on("data", onData)
        used.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
      })
    expect(await exchange()).toMatch(/^HTTP\/1\.1 200/)

    const silent = await openIdle(server.port, 20)
    const partial = (await openIdle(server.port, 1))[0] as Idle
    partial.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n")
    // Closed without a byte, and the one that began a head with a 408 problem.
    for (const socket of silent) expect(await socket.closed).toEqual({ received: "" })
    const { received } = await partial.closed
    expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
    expect(received).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/)
    expect(received).toMatch(/\r\nconnection: close\r\n/)
    expect(JSON.parse(received.slice(received.indexOf("\r\n\r\n") + 4))).toMatchObject({
      status: 408,
      code: "request_timeout"
    })

    // The used connection was opened before them, so its first-request deadline has passed too: it is open
    // and still served.
    expect(used.isClosed).toBe(false)
    expect(await exchange()).toMatch(/^HTTP\/1\.1 200/)
    used.socket.destroy()
    await stop(server)
  }, 60_000)
})
