// Webhook delivery by two built server processes on one PostgreSQL, both delivering: each event reaches its
// receiver exactly once in a clean run, and each webhook's events arrive in order, one at a time. Submissions are
// appended by the CLI while both run. Needs TEST_DATABASE_URL; skipped, with a note saying why, without it.
import { randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Conditions, Processes, TempDirectory, TestServices } from "@filedata/testing"
import * as TestServer from "./utils/TestServer.js"

const { finish, listening, startBuilt } = Processes

const KEY = "instances-owner-key"
const FILES = ["form-a", "form-b", "form-c"]
const WEBHOOKS_PER_FILE = 2
// 250 a file an append: three events a file (100, 100, 50), so six a webhook over two appends.
const PER_APPEND = 250
const APPENDS = 2
const EVENTS = FILES.length * WEBHOOKS_PER_FILE * APPENDS * Math.ceil(PER_APPEND / 100)

if (TestServices.databaseUrl === undefined) {
  console.warn(`Webhook instance tests SKIPPED: ${TestServices.databaseUnset}`)
  describe("webhook delivery by two instances on one PostgreSQL", () => {
    it.skip(`SKIPPED: ${TestServices.databaseUnset}`, () => {})
  })
} else {
  describe("webhook delivery by two instances on one PostgreSQL", () => {
    const dir = TempDirectory.make("webhook-instances")
    let database: Awaited<ReturnType<typeof TestServices.temporaryDatabase>> | undefined
    let env: Record<string, string> = {}
    // Each receipt as `path webhook-id first-n`, where first-n is the event's first submission's number.
    const received: Array<{ readonly path: string; readonly id: string; readonly first: number }> = []
    let inFlight = 0
    let mostInFlightAtOnePath = 0
    const inFlightByPath = new Map<string, number>()
    const receiver: Server = createServer((request, response) => {
      const path = request.url ?? ""
      const now = (inFlightByPath.get(path) ?? 0) + 1
      inFlightByPath.set(path, now)
      mostInFlightAtOnePath = Math.max(mostInFlightAtOnePath, now)
      inFlight++
      let body = ""
      request.setEncoding("utf8")
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        const event = JSON.parse(body) as { data: { submissions: Array<{ content: { n: string } }> } }
        received.push({
          path,
          id: String(request.headers["webhook-id"]),
          first: Number(event.data.submissions[0]?.content.n)
        })
        // A few milliseconds of work, so the two instances' attempts overlap.
        setTimeout(() => {
          inFlightByPath.set(path, (inFlightByPath.get(path) ?? 1) - 1)
          inFlight--
          response.writeHead(204).end()
        }, 5)
      })
    })

    beforeAll(async () => {
      database = await TestServices.temporaryDatabase("filedata_webhooks")
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
      env = {
        DATABASE_URL: database.url,
        DATABASE_POOL_MAX: "4",
        PORT: "0",
        HOST: "127.0.0.1",
        RATE_LIMIT_MAX: "1000",
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString("base64")
      }
      const fixture = {
        users: [{ id: "owner", apiKeys: [KEY] }],
        files: FILES.map((id) => ({ id, userId: "owner", name: id, creationDate: "2024-01-01T00:00:00.000Z" }))
      }
      await TestServer.importInto(env, fixture)
    }, 60_000)

    afterAll(async () => {
      Processes.killLeftovers()
      await new Promise<void>((resolve) => receiver.close(() => resolve()))
      await database?.drop()
    }, 60_000)

    it("delivers each event once, each webhook's in order, with both instances running", {
      timeout: 120_000
    }, async () => {
      const a = startBuilt("server", [], env)
      const b = startBuilt("server", [], env)
      const closed = [finish(a), finish(b)]
      try {
        const [baseA] = await Promise.all([listening(a), listening(b)])
        const port = (receiver.address() as AddressInfo).port
        for (const fileId of FILES) {
          for (let w = 0; w < WEBHOOKS_PER_FILE; w++) {
            const created = await fetch(`${baseA}/api/v1/webhooks/create`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ apiKey: KEY, fileId, url: `http://127.0.0.1:${port}/${fileId}/${w}` })
            })
            expect(created.status, await created.clone().text()).toBe(201)
          }
        }
        for (let round = 0; round < APPENDS; round++) {
          const document = {
            files: FILES.map((id) => ({
              id,
              submissions: Array.from({ length: PER_APPEND }, (_, i) => ({
                createdDate: "2024-03-01T00:00:00.000Z",
                content: { n: String(round * PER_APPEND + i) }
              }))
            }))
          }
          const appended = await finish(
            startBuilt("cli", ["append", TempDirectory.write(dir, `append-${round}.json`, document)], env)
          )
          expect(appended.code, appended.stderr).toBe(0)
        }
        await Conditions.until(() => (received.length >= EVENTS && inFlight === 0 ? true : undefined), {
          what: () => `${EVENTS} deliveries (${received.length} so far)`,
          limitMillis: 30_000
        })
        // Past the time a second delivery of any event would take, nothing more arrives.
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        expect(received).toHaveLength(EVENTS)
        expect(new Set(received.map((r) => `${r.path} ${r.id}`)).size).toBe(EVENTS)
        expect(mostInFlightAtOnePath).toBe(1)
        for (const fileId of FILES) {
          for (let w = 0; w < WEBHOOKS_PER_FILE; w++) {
            const firsts = received.filter((r) => r.path === `/${fileId}/${w}`).map((r) => r.first)
            expect(firsts).toEqual([0, 100, 200, 250, 350, 450])
          }
        }
      } finally {
        a.kill("SIGTERM")
        b.kill("SIGTERM")
      }
      for (const exit of await Promise.all(closed)) expect(exit.code, exit.stderr).toBe(0)
    })
  })
}
