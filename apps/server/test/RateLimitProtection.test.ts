// The rate limit's protection as outside attack scripts meet it, on the built server as a real process: a
// client behind a trusted proxy cannot get more quotas out of more spellings of its address.

import type { ChildProcess } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { build, finish, killLeftovers, listening, startBuilt } from "./utils/Processes.js"

const KEYS = ["protection-key-a-7d41", "protection-key-b-7d41", "protection-key-c-7d41"] as const

const fixture = {
  users: [{ id: "alice", apiKeys: [...KEYS] }],
  files: [{ id: "contact", userId: "alice", name: "Contact", creationDate: "2024-01-01T00:00:00.000Z" }]
}

/** A database holding the fixture, imported by the CLI, and the environment both apps read it with. */
const database = async () => {
  const dir = mkdtempSync(join(tmpdir(), "filedata-protection-"))
  const env = { DATABASE_URL: `file:${join(dir, "filedata.db")}`, PORT: "0", HOST: "127.0.0.1" }
  writeFileSync(join(dir, "fixture.json"), JSON.stringify(fixture))
  const imported = await finish(startBuilt("cli", ["import", join(dir, "fixture.json")], env))
  expect(imported.code, imported.stderr).toBe(0)
  return env
}

interface Running {
  readonly base: string
  readonly child: ChildProcess
  readonly closed: Promise<{ code: number | null; stdout: string; stderr: string }>
  /** What the server has printed so far. */
  readonly stdout: () => string
}

const serve = async (env: Record<string, string>): Promise<Running> => {
  const child = startBuilt("server", [], env)
  let stdout = ""
  child.stdout?.on("data", (chunk) => (stdout += chunk))
  const closed = finish(child)
  return { base: await listening(child), child, closed, stdout: () => stdout }
}

const stop = async ({ child, closed }: Running) => {
  child.kill("SIGTERM")
  const exit = await closed
  expect(exit.code, exit.stderr).toBe(0)
  for (const key of KEYS) expect(exit.stdout + exit.stderr).not.toContain(key)
  return exit
}

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

afterEach(killLeftovers)

beforeAll(build, 180_000)

describe("client addresses behind a trusted proxy (built server, real process)", () => {
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
