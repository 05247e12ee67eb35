// The rate limit's protection as outside attack scripts meet it, on the server (in this process) over HTTP: a
// client behind a trusted proxy cannot get more quotas out of more spellings of its address, and a Redis that
// goes away after the start leaves the limit counted in memory instead of lifted, and takes it back when it
// returns. The second part starts Redis servers of its own (it kills them); without `redis-server` on PATH it
// is skipped and says why.

import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { createServer } from "node:net"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Conditions } from "@filedata/testing"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const KEYS = ["protection-key-a-7d41", "protection-key-b-7d41", "protection-key-c-7d41"] as const

const fixture = {
  users: [{ id: "alice", apiKeys: [...KEYS] }],
  files: [{ id: "contact", userId: "alice", name: "Contact", creationDate: "2024-01-01T00:00:00.000Z" }]
}

/** A database holding the fixture, and the environment both apps read it with. */
const database = async () => (await TestServer.importedDatabase("protection", fixture)).env

const { serve } = InProcess

const stop = (server: InProcess.Served) => InProcess.stop(server, KEYS)

const call = async (base: string, apiKey: string, forwardedFor?: string) => {
  const reply = await fetch(`${base}/api/v1/file-data`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor })
    },
    body: JSON.stringify({ fileId: "contact", apiKey })
  })
  const body = (await reply.json()) as { readonly code?: string }
  return { status: reply.status, code: body.code, rateLimit: reply.headers.get("ratelimit") ?? "" }
}

const health = async (base: string) => {
  const reply = await fetch(`${base}/health`)
  return { status: reply.status, body: (await reply.json()) as unknown }
}

/** Polls `check` until it holds; gives up after 10 s. */
const eventually = (check: () => Promise<void> | void) => Conditions.passes(check, { limitMillis: 10_000 })

/** The JSON log lines the server wrote at `level` whose message starts with `prefix`. */
const logLines = (stdout: string, level: string, prefix: string) =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { readonly message: string; readonly logLevel: string })
    .filter((line) => line.logLevel === level && line.message.startsWith(prefix))

describe("client addresses behind a trusted proxy", () => {
  it("counts every spelling of one address, and every address of one IPv6 /64, against one quota; garbage under the proxy's own address", async () => {
    const env = await database()
    const running = await serve({ ...env, TRUST_PROXY: "true", RATE_LIMIT_IP_MAX: "3", RATE_LIMIT_MAX: "1000" })
    const { base } = running
    const quota = async (spellings: ReadonlyArray<string>, refused: string) => {
      for (const [i, spelling] of spellings.entries()) {
        const reply = await call(base, KEYS[0], `203.0.113.99, ${spelling}`)
        expect(reply.status, spelling).toBe(200)
        expect(reply.rateLimit).toContain(`"client-address";r=${2 - i};`)
      }
      const reply = await call(base, KEYS[0], `203.0.113.99, ${refused}`)
      expect([reply.status, reply.code], refused).toEqual([422, "rate_limited"])
    }

    // One IPv4 address, written four ways.
    await quota(["192.0.2.7", "::ffff:192.0.2.7", "192.0.2.7:51234"], "[::FFFF:c000:0207]:443")
    // One IPv6 /64: other hosts in it, other spellings of them.
    await quota(
      ["2001:db8:1:2::1", "2001:DB8:1:2:0:0:0:ff", "[2001:0db8:0001:0002:abcd::]:443"],
      "2001:db8:1:2:ffff:ffff:ffff:ffff"
    )
    // The next /64 has a quota of its own.
    expect((await call(base, KEYS[0], "2001:db8:1:3::1")).status).toBe(200)

    // Entries that are no address are counted under the socket's peer (this test, on 127.0.0.1): they share
    // its one quota instead of opening one each.
    await quota(["unknown", "1.2.3.4.5", "_hidden"], "0x7f.0.0.1")
    const direct = await call(base, KEYS[0])
    expect([direct.status, direct.code]).toEqual([422, "rate_limited"])
    expect((await call(base, KEYS[0], "198.51.100.20")).status).toBe(200)
    await stop(running)
  }, 60_000)
})

const hasRedisServer = spawnSync("redis-server", ["--version"]).error === undefined
if (!hasRedisServer) console.warn("Redis outage tests SKIPPED: redis-server is not on PATH, so no Redis can be stopped")

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

// A throwaway Redis without persistence: a restarted one starts with no counters.
const startRedis = (port: number) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", ""], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("Ready to accept connections")) resolve(child)
    })
    child.once("exit", (code) => reject(new Error(`redis-server exited with ${code}`)))
  })

const kill = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

describe.runIf(hasRedisServer)("Redis going away after the start", () => {
  let redis: ChildProcess | undefined
  afterEach(async () => {
    if (redis !== undefined) await kill(redis)
  })

  it("a key over its quota stays refused while Redis is down, counted in memory; /health says so; counting goes back to Redis when it returns", async () => {
    const env = await database()
    const port = await freePort()
    redis = await startRedis(port)
    const running = await serve({
      ...env,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      RATE_LIMIT_MAX: "3",
      RATE_LIMIT_IP_MAX: "1000",
      LOG_LEVEL: "info"
    })
    const { base } = running
    expect(await health(base)).toEqual({
      status: 200,
      body: { status: "ok", rateLimiter: "redis", webhookDelivery: true }
    })

    // Over its quota, counted in Redis.
    for (let i = 0; i < 3; i++) expect((await call(base, KEYS[0])).status).toBe(200)
    expect((await call(base, KEYS[0])).code).toBe("rate_limited")

    await kill(redis)
    await eventually(async () =>
      expect(await health(base)).toEqual({
        status: 200,
        body: { status: "ok", rateLimiter: "memory-fallback", webhookDelivery: true }
      })
    )
    // Still over its quota: the refusal Redis gave carries on in memory, for as long as Redis's window.
    for (let i = 0; i < 20; i++) {
      const reply = await call(base, KEYS[0])
      expect([reply.status, reply.code]).toEqual([422, "rate_limited"])
    }
    // A key Redis never refused is counted in memory against the same quota: not admitted uncounted.
    for (let i = 0; i < 3; i++) expect((await call(base, KEYS[1])).status).toBe(200)
    expect((await call(base, KEYS[1])).code).toBe("rate_limited")
    await eventually(() =>
      expect(
        logLines(running.stdout(), "WARN", "Rate limit store unreachable: counting in this process's memory")
      ).toHaveLength(1)
    )

    redis = await startRedis(port)
    await eventually(async () =>
      expect(await health(base)).toEqual({
        status: 200,
        body: { status: "ok", rateLimiter: "redis", webhookDelivery: true }
      })
    )
    // Counted in Redis again: the restarted Redis holds no counters, so the key refused in memory is admitted,
    // and its first request there leaves two.
    const back = await call(base, KEYS[1])
    expect(back.status).toBe(200)
    expect(back.rateLimit).toContain('"api-key";r=2;')
    await eventually(() =>
      expect(logLines(running.stdout(), "INFO", "Rate limit store reachable again")).toHaveLength(1)
    )
    // One warning for the whole outage, not one per request.
    expect(logLines(running.stdout(), "WARN", "Rate limit store unreachable")).toHaveLength(1)
    await stop(running)
  }, 60_000)
})
