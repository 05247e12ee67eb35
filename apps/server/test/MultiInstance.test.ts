// Two server instances as the operations guide deploys them: real processes sharing one PostgreSQL database
// and one Redis. Whatever one instance or the CLI writes, the other reads; one key's quota is one quota.
// Needs TEST_DATABASE_URL and TEST_REDIS_URL; skipped, with a note saying why, without them.

import { randomBytes } from "node:crypto"
import { rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Processes, TempDirectory, TestServices } from "@filedata/testing"

const { finish, listening, post, root, start } = Processes

const testDatabaseUrl = TestServices.databaseUrl
const testRedisUrl = TestServices.redisUrl
const skipReasons = [
  ...(testDatabaseUrl === undefined ? [TestServices.databaseUnset] : []),
  ...(testRedisUrl === undefined ? [TestServices.redisUnset] : [])
]
for (const reason of skipReasons) console.warn(`Multi-instance tests SKIPPED: ${reason}`)

// The `pg` driver the PostgreSQL adapter uses, reached through that package: the server's test files do not
// depend on it directly. Only what this file calls is typed.
interface PgClient {
  connect(): Promise<void>
  query(text: string): Promise<unknown>
  end(): Promise<void>
}
const pgClient = (connectionString: string): PgClient => {
  const fromPostgres = createRequire(join(root, "packages/postgres/package.json"))
  const fromSqlPg = createRequire(fromPostgres.resolve("@effect/sql-pg/package.json"))
  const pg = fromSqlPg("pg") as { Client: new (options: { connectionString: string }) => PgClient }
  return new pg.Client({ connectionString })
}

// Runs one statement on a connection of its own to the database TEST_DATABASE_URL names.
const admin = async (statement: string) => {
  const client = pgClient(testDatabaseUrl ?? "")
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

const RATE_LIMIT_MAX = 5

if (skipReasons.length > 0) {
  describe("two instances on one PostgreSQL and one Redis", () => {
    it.skip(`SKIPPED: ${skipReasons.join("; ")}`, () => {})
  })
} else {
  describe("two instances on one PostgreSQL and one Redis", () => {
    // Everything this run creates carries its own suffix: a database of its own, and API keys whose Redis
    // counters no earlier run can have touched.
    const run = `${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
    const database = `filedata_multi_${run}`
    const dir = TempDirectory.make("multi")
    const keys = { first: `multi-first-${run}`, second: `multi-second-${run}`, limited: `multi-limited-${run}` }
    let env: Record<string, string> = {}

    const before = {
      users: [{ id: "user-1", apiKeys: [keys.first, keys.limited] }],
      files: [
        {
          id: "file-1",
          userId: "user-1",
          name: "Contact form",
          creationDate: "2024-01-01T00:00:00.000Z",
          publicAvailability: true,
          SubmissionCounter: 2,
          VisitCounter: 10,
          submissions: [
            { createdDate: "2024-01-02T09:30:00.000Z", content: { email: "a@example.com" } },
            { createdDate: "2024-01-03T10:00:00.000Z", content: { email: "b@example.com", name: "B" } }
          ]
        }
      ]
    }
    const after = {
      users: [{ id: "user-3", apiKeys: [keys.second] }],
      files: [
        {
          id: "file-2",
          userId: "user-3",
          name: "Imported while serving",
          creationDate: "2024-02-01T00:00:00.000Z",
          submissions: [{ createdDate: "2024-02-02T00:00:00.000Z", content: { topic: "late" } }]
        }
      ]
    }

    beforeAll(async () => {
      await admin(`CREATE DATABASE ${database}`)
      const url = new URL(testDatabaseUrl ?? "")
      url.pathname = `/${database}`
      env = {
        DATABASE_URL: url.toString(),
        DATABASE_POOL_MAX: "4",
        REDIS_URL: testRedisUrl ?? "",
        // An unreachable Redis must fail the test, not admit every request uncounted.
        RATE_LIMIT_FAILURE_MODE: "closed",
        RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
        RATE_LIMIT_WINDOW_MS: "60000",
        RATE_LIMIT_IP_MAX: "1000000",
        PORT: "0",
        HOST: "127.0.0.1"
      }
      writeFileSync(join(dir, "before.json"), JSON.stringify(before))
      writeFileSync(join(dir, "after.json"), JSON.stringify(after))
    }, 60_000)

    afterAll(async () => {
      rmSync(dir, { recursive: true, force: true })
      // WITH (FORCE) ends connections a failed test may have left open (PostgreSQL 13 and later).
      await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    }, 60_000)

    it("serve the same data, see imports at once, share one quota, and stop cleanly", {
      timeout: 300_000
    }, async () => {
      const imported = await finish(start(["cli", "import", join(dir, "before.json")], env))
      expect(imported.code, imported.stderr).toBe(0)

      const a = start(["server"], env)
      const b = start(["server"], env)
      const closedA = finish(a)
      const closedB = finish(b)
      try {
        // Started together, the two take turns on the migration lock; both must come up.
        const [baseA, baseB] = await Promise.all([listening(a), listening(b)])
        expect(baseA).not.toBe(baseB)

        // A file imported before the start reads the same through either instance.
        const [replyA, replyB] = await Promise.all([
          post(baseA, { fileId: "file-1", apiKey: keys.first }),
          post(baseB, { fileId: "file-1", apiKey: keys.first })
        ])
        expect(replyA.status).toBe(200)
        expect(replyB.status).toBe(200)
        const [bodyA, bodyB] = [await replyA.text(), await replyB.text()]
        expect(bodyA).toBe(bodyB)
        expect(JSON.parse(bodyA)).toEqual({
          name: "Contact form",
          creationDate: "2024-01-01T00:00:00.000Z",
          publicAvailability: true,
          SubmissionCounter: 2,
          VisitCounter: 10,
          submissions: before.files[0]?.submissions
        })

        // Not there yet; then imported through the CLI while both serve, and readable through B at once.
        expect((await post(baseB, { fileId: "file-2", apiKey: keys.second })).status).toBe(403)
        const late = await finish(start(["cli", "import", join(dir, "after.json")], env))
        expect(late.code, late.stderr).toBe(0)
        const lateReply = await post(baseB, { fileId: "file-2", apiKey: keys.second })
        expect(lateReply.status).toBe(200)
        expect(await lateReply.json()).toEqual({
          name: "Imported while serving",
          creationDate: "2024-02-01T00:00:00.000Z",
          publicAvailability: false,
          SubmissionCounter: 1,
          VisitCounter: 0,
          submissions: [{ createdDate: "2024-02-02T00:00:00.000Z", content: { topic: "late" } }]
        })
        expect((await post(baseA, { fileId: "file-2", apiKey: keys.second })).status).toBe(200)

        // One key, 20 requests: ten one after another alternating A and B, then ten at once over both.
        const body = { fileId: "file-1", apiKey: keys.limited }
        const statuses: Array<{ status: number; code: string | undefined; retryAfter: string | null }> = []
        const record = async (reply: Response) => {
          const json = (await reply.json()) as { code?: string }
          statuses.push({ status: reply.status, code: json.code, retryAfter: reply.headers.get("retry-after") })
        }
        for (let i = 0; i < 10; i++) await record(await post(i % 2 === 0 ? baseA : baseB, body))
        // The sequential half alone already crosses the limit, so the quota is shared and not per instance.
        expect(statuses.filter((s) => s.status === 200)).toHaveLength(RATE_LIMIT_MAX)
        await Promise.all(Array.from({ length: 10 }, (_, i) => post(i % 2 === 0 ? baseA : baseB, body).then(record)))

        expect(statuses).toHaveLength(20)
        expect(statuses.filter((s) => s.status === 200)).toHaveLength(RATE_LIMIT_MAX)
        const refused = statuses.filter((s) => s.status !== 200)
        expect(refused).toHaveLength(20 - RATE_LIMIT_MAX)
        for (const s of refused) {
          expect(s).toMatchObject({ status: 422, code: "rate_limited" })
          expect(Number(s.retryAfter)).toBeGreaterThan(0)
          expect(Number(s.retryAfter)).toBeLessThanOrEqual(60)
        }
        // Another key of the same user still has its own quota on both instances.
        expect((await post(baseA, { fileId: "file-1", apiKey: keys.first })).status).toBe(200)
        expect((await post(baseB, { fileId: "file-1", apiKey: keys.first })).status).toBe(200)
      } finally {
        a.kill("SIGTERM")
        b.kill("SIGTERM")
      }
      const [exitA, exitB] = await Promise.all([closedA, closedB])
      expect(exitA.code, exitA.stderr).toBe(0)
      expect(exitB.code, exitB.stderr).toBe(0)
      for (const key of Object.values(keys)) {
        expect(exitA.stdout + exitB.stdout).not.toContain(key)
      }
    })
  })
}
