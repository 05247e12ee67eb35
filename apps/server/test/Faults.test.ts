// The running service when its database fails under it, and when it is stopped with replies in flight, as
// outside fault scripts drive it: the server in this process while its SQLite file is handled from here
// (deleted, moved, overwritten, replaced by a directory, locked), the built server as a real process where its
// output, its stop or its load is the subject, signals sent for real.

import { chmodSync, mkdirSync, renameSync, writeFileSync } from "node:fs"
import { Agent, request as httpRequest } from "node:http"
import { connect as tcpConnect } from "node:net"
import { join } from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Conditions, Fixtures, Processes, SqliteFiles } from "@filedata/testing"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const { killLeftovers, post } = Processes
const { backup, connect, remove, restore } = SqliteFiles

const KEY = "fault-test-key-3f9a1c"
const body = { fileId: "contact", apiKey: KEY }

const fixture = Fixtures.aliceContact([KEY], {
  submissions: [{ createdDate: "2024-01-02T09:30:00.000Z", content: { email: "a@example.com" } }]
})

/** A database holding `document`, and the environment both apps read it with. */
const database = (document: unknown) => TestServer.importedDatabase("faults", document)

type Running = Processes.Served
const { serve } = Processes

/** Stops the server as an orchestrator does; it must still be running, exit 0, and never have printed the key. */
const stop = async ({ child, closed }: Running) => {
  expect(child.exitCode).toBeNull()
  child.kill("SIGTERM")
  const exit = await closed
  expect(exit.code, exit.stderr).toBe(0)
  expect(exit.stdout + exit.stderr).not.toContain(KEY)
  return exit
}

// The database's faults need no process of their own: the server runs in this process, which a crash would
// fail, and the file is handled from here as from another process (SQLite locks between connections alike).
const serveHere = (env: Record<string, string>) => InProcess.serve(env)
/** Stops a server of {@link serveHere} (the drain); it must never have printed the key. */
const stopHere = (server: InProcess.Served) => InProcess.stop(server, [KEY])

const health = (base: string) => fetch(`${base}/health`)

/** The operation and the health check both answer 503 problems, at once, saying nothing of the request. */
const expectUnavailable = async (base: string) => {
  for (let i = 0; i < 3; i++) {
    const started = performance.now()
    const reply = await post(base, body)
    const text = await reply.text()
    expect(reply.status).toBe(503)
    expect(reply.headers.get("content-type")).toBe("application/problem+json")
    expect(reply.headers.get("retry-after")).toBe("1")
    expect(JSON.parse(text)).toMatchObject({ status: 503, code: "storage_unavailable" })
    expect(text).not.toContain(KEY)
    const checked = await health(base)
    expect(checked.status).toBe(503)
    expect(await checked.json()).toMatchObject({ status: 503, code: "storage_unavailable" })
    // Bounded by the busy timeout, never a hang; the margin is for a loaded machine.
    expect(performance.now() - started).toBeLessThan(2_000)
  }
}

/** Polls until the operation and the health check answer 200 again; fails after a few seconds. */
const expectServing = async (base: string) => {
  let seen = ""
  const reply = await Conditions.until(
    async () => {
      const reply = await post(base, body)
      const checked = await health(base)
      if (reply.status === 200 && checked.status === 200) return reply
      await reply.body?.cancel()
      seen = `still ${reply.status} / health ${checked.status}`
      return undefined
    },
    { what: () => seen, limitMillis: 5_000, intervalMillis: 25 }
  )
  expect((await reply.json()).submissions).toHaveLength(1)
}

afterEach(killLeftovers)

describe("the server when its SQLite database fails", () => {
  it("deleted, then restored from a backup; moved away, then back: 503 meanwhile, no crash", async () => {
    const { dir, filename, env } = await database(fixture)
    const server = await serveHere(env)
    await expectServing(server.base)
    const saved = join(dir, "backup.db")
    backup(filename, saved)

    remove(filename)
    await expectUnavailable(server.base)
    restore(saved, filename)
    await expectServing(server.base)

    renameSync(filename, `${filename}.away`)
    await expectUnavailable(server.base)
    renameSync(`${filename}.away`, filename)
    await expectServing(server.base)

    const exit = await stopHere(server)
    expect(exit.stdout).toContain("The database is unavailable")
  }, 60_000)

  it("unreadable: header overwritten with garbage, or the path a directory: 503 until the file is back", async () => {
    const { dir, filename, env } = await database(fixture)
    const server = await serveHere(env)
    await expectServing(server.base)
    const saved = join(dir, "backup.db")
    backup(filename, saved)

    writeFileSync(filename, Buffer.alloc(8192, "not a database "))
    await expectUnavailable(server.base)
    restore(saved, filename)
    await expectServing(server.base)

    remove(filename)
    mkdirSync(filename)
    await expectUnavailable(server.base)
    restore(saved, filename)
    await expectServing(server.base)
    await stopHere(server)
  }, 60_000)

  const root = process.getuid?.() === 0
  it.skipIf(root)(
    `unreadable by mode (chmod 000): 503 until readable again${root ? " (skipped: running as root, which reads any file whatever its mode)" : ""}`,
    async () => {
      const { filename, env } = await database(fixture)
      const server = await serveHere(env)
      await expectServing(server.base)
      chmodSync(filename, 0o000)
      await expectUnavailable(server.base)
      chmodSync(filename, 0o644)
      await expectServing(server.base)
      await stopHere(server)
    },
    60_000
  )

  it("locked by another writer: WAL reads go on; a file held exclusively is 503 fast, and served once released", async () => {
    const { dir, filename, env } = await database(fixture)
    const server = await serveHere(env)
    await expectServing(server.base)

    // WAL mode: a writer in the middle of a transaction does not hold readers up.
    const writer = connect(filename)
    writer.exec("BEGIN EXCLUSIVE; INSERT INTO users (id) VALUES ('writer')")
    const reply = await post(server.base, body)
    expect(reply.status).toBe(200)
    await reply.body?.cancel()
    writer.exec("ROLLBACK")
    writer.close()

    // A restored copy (rollback-journal mode) that another process holds exclusively, with a write pending.
    const copy = join(dir, "copy.db")
    backup(filename, copy)
    const locker = connect(copy)
    locker.exec("BEGIN EXCLUSIVE; INSERT INTO users (id) VALUES ('locker')")
    remove(filename)
    renameSync(copy, filename)
    await expectUnavailable(server.base)
    locker.exec("ROLLBACK")
    locker.close()
    await expectServing(server.base)
    await stopHere(server)
  }, 60_000)

  it("goes on serving when whatever reads its log output goes away (EPIPE), and still stops cleanly", async () => {
    const { env } = await database(fixture)
    const server = await serve({ ...env, LOG_LEVEL: "info" })
    await expectServing(server.base)
    // A log shipper restarting, `| head`: every request's log line now meets a closed pipe, the first one
    // at the latest; the requests after it show the server went on.
    server.child.stdout?.destroy()
    for (let i = 0; i < 5; i++) await expectServing(server.base)
    expect(server.child.exitCode).toBeNull()
    server.child.kill("SIGTERM")
    const exit = await server.closed
    expect(exit.code, exit.stderr).toBe(0)
  }, 60_000)
})

describe("large replies (real processes)", () => {
  const SUBMISSIONS = 100_000
  const big = {
    users: [{ id: "bulk", apiKeys: [KEY] }],
    files: [{ ...fixture.files[0], userId: "bulk" }, Fixtures.bulkFile(SUBMISSIONS, 8)]
  }

  // One database for every test here: the import takes a few seconds, and stopping the server changes nothing.
  let env: Record<string, string> = {}
  beforeAll(async () => {
    env = (await database(big)).env
  }, 180_000)

  interface Download {
    readonly headers: Promise<void>
    readonly done: Promise<{ readonly complete: boolean; readonly text: string; readonly at: number }>
    /** Reads on at full speed. */
    readonly resume: () => void
  }

  /**
   * A client of the big file reading at `bytesPerMilli` (0: reads the headers, then nothing until resumed),
   * on a connection it keeps alive afterwards, as HTTP clients do.
   */
  const download = (base: string, bytesPerMilli: number): Download => {
    let gotHeaders = () => {}
    let resume = () => {}
    const headers = new Promise<void>((resolve) => (gotHeaders = resolve))
    const done = new Promise<{ complete: boolean; text: string; at: number }>((resolve) => {
      const chunks: Array<Buffer> = []
      const end = (complete: boolean) =>
        resolve({ complete, text: Buffer.concat(chunks).toString("utf8"), at: performance.now() })
      const req = httpRequest(`${base}/api/v1/file-data`, {
        method: "POST",
        agent: new Agent({ keepAlive: true }),
        headers: { "content-type": "application/json" }
      })
      req.on("error", () => end(false))
      req.on("response", (res) => {
        let rate = bytesPerMilli
        resume = () => {
          rate = Number.POSITIVE_INFINITY
          res.resume()
        }
        gotHeaders()
        // A paused reply is not read from the socket at all, so the server's writes stall on a full buffer.
        if (rate === 0) res.pause()
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk)
          if (rate === Number.POSITIVE_INFINITY) return
          res.pause()
          setTimeout(() => res.resume(), chunk.length / rate)
        })
        res.on("end", () => end(true))
        res.on("error", () => end(false))
        res.on("close", () => end(res.complete))
      })
      req.end(JSON.stringify({ fileId: "bulk", apiKey: KEY }))
    })
    return { headers, done, resume: () => resume() }
  }

  /** Resolves once a new connection to `port` is refused; fails after `limitMillis`. */
  const refused = (port: number, limitMillis: number) => {
    let outcome = ""
    return Conditions.until(
      async () => {
        outcome = await new Promise<string>((resolve) => {
          const socket = tcpConnect(port, "127.0.0.1")
          socket.once("connect", () => {
            socket.destroy()
            resolve("connected")
          })
          socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
        })
        return outcome === "ECONNREFUSED" ? performance.now() : undefined
      },
      { what: () => `connections still ${outcome}`, limitMillis, intervalMillis: 20 }
    )
  }

  // The first whole reply is parsed and checked; the others are compared with it byte for byte, which holds
  // them to as much and spares parsing 40 MiB each time.
  let whole: string | undefined
  const expectWhole = (reply: { readonly complete: boolean; readonly text: string }) => {
    expect(reply.complete).toBe(true)
    if (whole !== undefined) return expect(reply.text === whole, "the same bytes as the first whole reply").toBe(true)
    const parsed = JSON.parse(reply.text)
    expect(parsed.submissions).toHaveLength(SUBMISSIONS)
    expect(parsed.submissions[SUBMISSIONS - 1].content.n).toBe(String(SUBMISSIONS - 1))
    whole = reply.text
  }

  it("a reply read at full speed does not hold up the requests that arrive meanwhile", async () => {
    const server = await serve(env)
    const reader = download(server.base, Number.POSITIVE_INFINITY)
    await reader.headers
    // Small requests one after another while the big reply (about 40 MiB) is being written: each is
    // answered between two of its pages, so all of them before its last byte.
    const answered: Array<number> = []
    for (let i = 0; i < 5; i++) {
      const reply = await post(server.base, body)
      expect(reply.status).toBe(200)
      await reply.arrayBuffer()
      answered.push(performance.now())
    }
    const reply = await reader.done
    expectWhole(reply)
    expect(Math.max(...answered)).toBeLessThan(reply.at)
    await stop(server)
  }, 60_000)

  it("lets the replies in flight finish whole, refuses new connections meanwhile, then exits 0", async () => {
    const server = await serve(env)
    const port = Number(new URL(server.base).port)
    // Two readers that take a second or two for the whole reply.
    const clients = [download(server.base, 24_000), download(server.base, 16_000)]
    await Promise.all(clients.map((client) => client.headers))

    const signalled = performance.now()
    server.child.kill("SIGTERM")
    const refusedAt = await refused(port, 3_000)
    const replies = await Promise.all(clients.map((client) => client.done))
    const exit = await server.closed
    const exitedAt = performance.now()

    expect(exit.code, exit.stderr).toBe(0)
    for (const reply of replies) {
      // Still being read when the listener had closed, and arrived whole.
      expect(reply.at).toBeGreaterThan(refusedAt)
      expectWhole(reply)
    }
    // The kept-alive connections were closed once their replies ended, not after the keep-alive timeout (5 s).
    expect(exitedAt - Math.max(...replies.map((reply) => reply.at))).toBeLessThan(2_000)
    expect(exitedAt - signalled).toBeLessThan(9_000)
  }, 60_000)

  it("cuts a reply that would outlast the drain bound (HTTP_DRAIN_TIMEOUT_MS) at the bound, and still exits 0", async () => {
    // Long enough for the finishing reader's reply (a fraction of a second) on a loaded machine.
    const DRAIN_MILLIS = 2_500
    const server = await serve({ ...env, HTTP_DRAIN_TIMEOUT_MS: String(DRAIN_MILLIS) })
    const finishing = download(server.base, 80_000)
    const stalled = download(server.base, 0)
    await Promise.all([finishing.headers, stalled.headers])

    const signalled = performance.now()
    server.child.kill("SIGTERM")
    const exit = await server.closed
    const exitedAt = performance.now()
    // Reading on now shows what the stalled client was sent: a reply cut short.
    stalled.resume()
    const cut = await stalled.done

    expect(exit.code, exit.stderr).toBe(0)
    expectWhole(await finishing.done)
    expect(cut.complete).toBe(false)
    // The stop is in the log, whatever LOG_LEVEL says: when it began, with what in flight, and how it ended.
    const lines = exit.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { message: string; annotations: Record<string, unknown> })
    const stopping = lines.find((line) => line.message.startsWith("stopping"))
    expect(stopping?.message).toBe(
      `stopping on SIGTERM: 2 replies in flight, cut after ${DRAIN_MILLIS} ms (HTTP_DRAIN_TIMEOUT_MS)`
    )
    expect(stopping?.annotations).toEqual({ signal: "SIGTERM", repliesInFlight: 2, drainTimeoutMs: DRAIN_MILLIS })
    const stopped = lines.find((line) => line.message.startsWith("stopped"))
    expect(stopped?.message).toMatch(/^stopped: 1 reply finished, 1 cut, in \d+ ms$/)
    expect(stopped?.annotations).toMatchObject({ repliesFinished: 1, repliesCut: 1 })
    expect(Number(stopped?.annotations.durationMs)).toBeGreaterThanOrEqual(DRAIN_MILLIS - 50)
    expect(() => JSON.parse(cut.text)).toThrow()
    expect(exitedAt - signalled).toBeGreaterThan(DRAIN_MILLIS - 1_000)
    expect(exitedAt - signalled).toBeLessThan(DRAIN_MILLIS + 4_000)
  }, 60_000)

  it("under load on kept-alive connections: every reply sent is whole, and it exits 0 at once", async () => {
    const server = await serve({ ...env, RATE_LIMIT_MAX: "1000000", RATE_LIMIT_IP_MAX: "1000000" })
    const statuses: Array<number> = []
    const replies = [0, 0, 0, 0]
    // fetch keeps connections alive between requests; each loop goes on until its connection is refused.
    const loops = replies.map(async (_, loop) => {
      for (;;) {
        try {
          const reply = await post(server.base, body)
          const parsed = await reply.json()
          statuses.push(reply.status)
          replies[loop] = (replies[loop] ?? 0) + 1
          if (reply.status === 200) expect(parsed.submissions).toHaveLength(1)
        } catch {
          return performance.now()
        }
      }
    })
    // Under load: every loop has had replies on its kept-alive connection.
    await Conditions.until(() => (replies.every((count) => count >= 20) ? true : undefined), {
      what: () => `replies per loop ${replies.join(", ")}`,
      limitMillis: 10_000
    })
    const signalled = performance.now()
    server.child.kill("SIGTERM")
    const exit = await server.closed
    const exitedAt = performance.now()
    const stopped = await Promise.all(loops)

    expect(exit.code, exit.stderr).toBe(0)
    expect(statuses.length).toBeGreaterThan(0)
    expect(new Set(statuses)).toEqual(new Set([200]))
    for (const at of stopped) expect(at).toBeGreaterThan(signalled)
    expect(exitedAt - signalled).toBeLessThan(3_000)
  }, 60_000)
})
