import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { createServer } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { RateLimiterConformance } from "@filedata/conformance"
import type { FileData, RateLimiter } from "@filedata/core"
import { Conditions, Logs, TestServices } from "@filedata/testing"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { Redis } from "ioredis"
import { RedisRateLimiter } from "../src/index.js"

const { apiKey, clientAddress, policy, refusal } = RateLimiterConformance

const testRedisUrl = TestServices.redisUrl
const hasTestRedis = testRedisUrl !== undefined
const hasRedisServer = spawnSync("redis-server", ["--version"]).error === undefined

const skipReasons = [
  ...(hasTestRedis ? [] : [TestServices.redisUnset]),
  ...(hasRedisServer ? [] : ["redis-server is not on PATH, so no Redis can be started and stopped"])
]
for (const reason of skipReasons) console.warn(`RedisRateLimiter tests partly SKIPPED: ${reason}`)

const limiterOn = (
  url: string,
  options: {
    readonly failureMode: RedisRateLimiter.FailureMode
    readonly policy: RateLimiter.RateLimitPolicy
    readonly keyPrefix?: string
  }
) =>
  RedisRateLimiter.make({
    url: Redacted.make(url),
    keyPrefix: options.keyPrefix ?? `filedata-test:${randomUUID()}:`,
    policy: options.policy,
    failureMode: options.failureMode
  })

const redisClient = (url: string) =>
  Effect.acquireRelease(
    Effect.sync(() => new Redis(url)),
    (client) => Effect.sync(() => client.disconnect())
  )

// Waits until `check` stops throwing (log lines are written by the limiter's own fiber, a moment later).
const eventually = (check: () => void) => Conditions.eventually(Effect.try(check), { limitMillis: 3_000 })

const messages = (lines: ReadonlyArray<Logs.Line>, level: string) =>
  lines.filter((line) => line.level === level).map((line) => String(line.message))

// Nothing listens on port 1: connections are refused at once.
const UNREACHABLE = "redis://127.0.0.1:1"

describe("RedisRateLimiter, Redis unreachable at start", () => {
  it.scopedLive("fails to build with RateLimiterUnavailable carrying the client's reason", () =>
    Effect.gen(function* () {
      // Each waits out the connect timeout; both at once.
      const errors = yield* Effect.forEach(
        ["memory", "closed"] as const,
        (failureMode) => Effect.flip(limiterOn(UNREACHABLE, { failureMode, policy: policy(2) })),
        { concurrency: "unbounded" }
      )
      for (const error of errors) {
        expect(error._tag).toBe("RateLimiterUnavailable")
        expect(error.cause).toBeInstanceOf(Error)
        expect((error.cause as Error).message).toBe("connect ECONNREFUSED 127.0.0.1:1")
      }
    })
  )

  it.scopedLive("names a host that does not resolve", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        limiterOn("redis://filedata-no-such-host.invalid:6379", { failureMode: "open", policy: policy(2) })
      )
      expect((error.cause as Error).message).toMatch(/ENOTFOUND filedata-no-such-host\.invalid/)
    })
  )
})

describe.runIf(hasTestRedis)("RedisRateLimiter, against TEST_REDIS_URL", () => {
  const url = testRedisUrl ?? ""

  it.scopedLive("two instances sharing Redis admit exactly the limit from 200 concurrent requests", () =>
    Effect.gen(function* () {
      const options = {
        failureMode: "closed",
        policy: policy(50, 10_000),
        keyPrefix: `filedata-test:${randomUUID()}:`
      } as const
      // Two clients with their own connections, as two processes of the service would have.
      const first = yield* limiterOn(url, options)
      const second = yield* limiterOn(url, options)
      const results = yield* Effect.all(
        Array.from({ length: 200 }, (_, i) => Effect.either((i % 2 === 0 ? first : second).consume(apiKey("shared")))),
        { concurrency: "unbounded" }
      )
      expect(results.filter(Either.isRight)).toHaveLength(50)
      // Each admitted request saw its own count: 49 remaining down to 0.
      expect(new Set(results.filter(Either.isRight).map((result) => result.right.remaining)).size).toBe(50)
      expect(results.filter(Either.isLeft).every((result) => result.left._tag === "RateLimited")).toBe(true)
    })
  )

  it.scopedLive("sends one command per check and one per request counted in one step, run inside Redis", () =>
    Effect.gen(function* () {
      const keyPrefix = `filedata-test:${randomUUID()}:`
      const limiter = yield* limiterOn(url, { failureMode: "closed", policy: policy(3), keyPrefix })
      const events: Array<{ readonly args: ReadonlyArray<string>; readonly source: string }> = []
      const monitor = yield* Effect.acquireRelease(
        Effect.flatMap(redisClient(url), (client) => Effect.promise(() => client.monitor())),
        (monitor) => Effect.sync(() => monitor.disconnect())
      )
      monitor.on("monitor", (_time: string, args: Array<string>, source: string) => {
        events.push({ args, source })
      })
      for (let i = 0; i < 4; i++) yield* Effect.either(limiter.consume(apiKey(`k-${i % 2}`)))
      const key = Redacted.make("k-2" as typeof FileData.ApiKeyText.Type)
      for (let i = 0; i < 2; i++) yield* Effect.orDie(limiter.consumeRequest?.("192.0.2.1", key) ?? Effect.void)
      // Redis shows a monitor the commands in the order it runs them: once a command sent after the checks
      // has shown, every command of the checks has.
      const marker = `after-the-checks-${randomUUID()}`
      const admin = yield* redisClient(url)
      yield* Effect.promise(() => admin.echo(marker))
      yield* Conditions.eventually(
        Effect.suspend(() => (events.some((event) => event.args[1] === marker) ? Effect.void : Effect.fail(marker))),
        { limitMillis: 5_000 }
      )
      // The monitor shows every client of this Redis (other test files, other runs): only this limiter's keys count.
      const ours = events.filter((event) => event.args.some((arg) => arg.startsWith(keyPrefix)))
      const scripts = ours.filter((event) => /^eval(sha)?$/i.test(event.args[0] ?? ""))
      expect(scripts).toHaveLength(6)
      const limiterConnection = scripts[0]?.source
      expect(events.filter((event) => event.source === limiterConnection)).toHaveLength(6)
      expect(ours.filter((event) => event.source === "lua").map((event) => event.args[0]?.toUpperCase())).toContain(
        "INCR"
      )
    })
  )

  it.scopedLive("stores subjects only as hashes under its prefix", () =>
    Effect.gen(function* () {
      const keyPrefix = `filedata-test:${randomUUID()}:`
      const limiter = yield* limiterOn(url, { failureMode: "closed", policy: policy(3), keyPrefix })
      yield* limiter.consume(apiKey("plain-secret-api-key"))
      yield* limiter.consume(clientAddress("203.0.113.7"))
      const admin = yield* redisClient(url)
      const keys = yield* Effect.promise(() => admin.keys(`${keyPrefix}*`))
      expect(keys).toHaveLength(2)
      for (const key of keys) {
        expect(key).toMatch(new RegExp(`^${keyPrefix}(apiKey|clientAddress):[A-Za-z0-9_-]{43}$`))
        expect(key).not.toContain("plain-secret-api-key")
        expect(key).not.toContain("203.0.113.7")
      }
      const ttl = yield* Effect.promise(() => admin.pttl(keys[0] ?? ""))
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(400)
    })
  )

  it.scopedLive("gives a counter left without expiry a new window instead of locking its subject out", () =>
    Effect.gen(function* () {
      const keyPrefix = `filedata-test:${randomUUID()}:`
      const limiter = yield* limiterOn(url, { failureMode: "closed", policy: policy(2), keyPrefix })
      yield* limiter.consume(apiKey("k"))
      const admin = yield* redisClient(url)
      const [key] = yield* Effect.promise(() => admin.keys(`${keyPrefix}*`))
      yield* Effect.promise(() => admin.set(key ?? "", "99"))
      expect(yield* limiter.consume(apiKey("k"))).toMatchObject({ remaining: 1, resetMillis: 400 })
      yield* limiter.consume(apiKey("k"))
      yield* refusal(limiter.consume(apiKey("k")))
    })
  )
})

const freePort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const exited = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
  })

// A throwaway Redis of the test's own, without persistence; killed when the scope closes.
const startRedisServer = (port: number) =>
  Effect.acquireRelease(
    Effect.async<ChildProcess, Error>((resume) => {
      const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", ""], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("Ready to accept connections")) resume(Effect.succeed(child))
      })
      child.once("exit", (code) => resume(Effect.fail(new Error(`redis-server exited with ${code}`))))
    }),
    (child) =>
      Effect.zipRight(
        Effect.sync(() => child.kill("SIGKILL")),
        exited(child)
      )
  )

describe.runIf(hasRedisServer)("RedisRateLimiter, a Redis that goes away after start", () => {
  // A limiter built on a Redis of its own, which the test then stops (killed when the returned scope closes).
  const limiterOnOwnRedis = (failureMode: RedisRateLimiter.FailureMode, limit = 2) =>
    Effect.gen(function* () {
      const port = yield* freePort
      const server = yield* startRedisServer(port)
      const limiter = yield* limiterOn(`redis://127.0.0.1:${port}`, { failureMode, policy: policy(limit, 60_000) })
      return { port, server, limiter }
    })

  const counting = (limiter: RateLimiter.RateLimiter) => limiter.counting ?? Effect.die("no counting")

  const stop = (server: ChildProcess) =>
    Effect.zipRight(
      Effect.sync(() => server.kill("SIGKILL")),
      exited(server)
    )

  it.scopedLive("open: admits uncounted requests fast, and warns once, not per request", () => {
    const { lines, logger } = Logs.capture()
    return Effect.gen(function* () {
      const { limiter, server } = yield* limiterOnOwnRedis("open")
      yield* limiter.consume(apiKey("k"))
      yield* stop(server)
      for (let i = 0; i < 5; i++) {
        const [took, state] = yield* Effect.timed(limiter.consume(apiKey("k")))
        expect(Duration.toMillis(took)).toBeLessThan(1_000)
        expect(state).toEqual({ scope: "apiKey", limit: 2, windowMillis: 60_000, remaining: 2, resetMillis: 60_000 })
      }
      expect(yield* counting(limiter)).toBe("uncounted")
      yield* eventually(() => expect(messages(lines, "WARN")).toHaveLength(1))
      expect(messages(lines, "WARN")[0]).toContain("admitting requests without counting them")
    }).pipe(Effect.provide(logger))
  })

  it.scopedLive("closed: refuses with RateLimiterUnavailable fast", () =>
    Effect.gen(function* () {
      const { limiter, server } = yield* limiterOnOwnRedis("closed")
      expect(yield* counting(limiter)).toBe("redis")
      yield* stop(server)
      const [took, error] = yield* Effect.timed(Effect.flip(limiter.consume(clientAddress("10.0.0.1"))))
      expect(Duration.toMillis(took)).toBeLessThan(1_000)
      expect(error._tag).toBe("RateLimiterUnavailable")
      expect(yield* counting(limiter)).toBe("refusing")
    })
  )

  it.scopedLive(
    "memory, the default: counts in memory with the same policy while Redis is away, keeps what Redis refused refused, and goes back to Redis when it returns",
    () => {
      const { lines, logger } = Logs.capture()
      return Effect.gen(function* () {
        const port = yield* freePort
        const url = `redis://127.0.0.1:${port}`
        const server = yield* startRedisServer(port)
        // No failure mode given: the default.
        const limiter = yield* RedisRateLimiter.make({
          url: Redacted.make(url),
          keyPrefix: `filedata-test:${randomUUID()}:`,
          policy: policy(3, 60_000)
        })
        expect(yield* counting(limiter)).toBe("redis")
        for (let i = 0; i < 3; i++) yield* limiter.consume(apiKey("over"))
        yield* refusal(limiter.consume(apiKey("over")))
        expect((yield* limiter.consume(apiKey("under"))).remaining).toBe(2)

        yield* stop(server)
        // The closed connection alone switches it, before any check.
        yield* eventually(() => expect(Effect.runSync(counting(limiter))).toBe("memory-fallback"))
        // Over its quota in Redis, over it here: refused until Redis's window would have closed.
        for (let i = 0; i < 5; i++) {
          const refused = yield* Effect.flip(limiter.consume(apiKey("over")))
          expect(refused._tag).toBe("RateLimited")
          expect(refused._tag === "RateLimited" && refused.retryAfterMillis).toBeGreaterThan(50_000)
        }
        // Others are counted in this process's memory, against the same quota.
        const counted = [yield* limiter.consume(apiKey("under")), yield* limiter.consume(apiKey("under"))]
        expect(counted.map((state) => state.remaining)).toEqual([2, 1])
        yield* limiter.consume(apiKey("under"))
        yield* refusal(limiter.consume(apiKey("under")))
        for (let i = 0; i < 3; i++) yield* limiter.consume(clientAddress("198.51.100.1"))
        yield* refusal(limiter.consume(clientAddress("198.51.100.1")))
        // A request counted in one step takes the same way: its address in memory, its key still refused.
        const request = yield* Effect.orDie(
          limiter.consumeRequest?.("198.51.100.2", Redacted.make("over" as typeof FileData.ApiKeyText.Type)) ??
            Effect.dieMessage("no consumeRequest")
        )
        expect(request.clientAddress).toMatchObject({ right: { scope: "clientAddress", remaining: 2 } })
        expect(request.apiKey).toMatchObject({ left: { _tag: "RateLimited", scope: "apiKey" } })

        yield* eventually(() => expect(messages(lines, "WARN")).toHaveLength(1))
        expect(messages(lines, "WARN")[0]).toContain("counting in this process's memory")

        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* startRedisServer(port)
            yield* eventually(() => expect(Effect.runSync(counting(limiter))).toBe("redis"))
            // A fresh Redis without persistence: counted there from one again.
            expect((yield* limiter.consume(apiKey("over"))).remaining).toBe(2)
            const admin = yield* redisClient(url)
            expect(yield* Effect.promise(() => admin.dbsize())).toBeGreaterThanOrEqual(1)
            yield* eventually(() => expect(messages(lines, "INFO")).toHaveLength(1))
            expect(messages(lines, "INFO")[0]).toBe("Rate limit store reachable again: counting in Redis")
            // One warning for the outage, however many checks it saw.
            expect(messages(lines, "WARN")).toHaveLength(1)
          })
        )
      }).pipe(Effect.provide(logger))
    }
  )

  it.live("memory: a Redis that stops answering costs one check's timeout, then checks count in memory at once", () =>
    Effect.gen(function* () {
      const { limiter, server } = yield* limiterOnOwnRedis("memory", 5)
      yield* limiter.consume(apiKey("k"))
      server.kill("SIGSTOP")
      // The connection stays open: the first check finds out by its timeout, and is counted in memory.
      const [stalled, first] = yield* Effect.timed(limiter.consume(apiKey("k")))
      expect(Duration.toMillis(stalled)).toBeGreaterThanOrEqual(200)
      expect(first.remaining).toBe(4)
      expect(yield* counting(limiter)).toBe("memory-fallback")
      // From then on no check asks Redis: they are answered in the same step.
      for (let i = 0; i < 4; i++) yield* limiter.consume(apiKey("k"))
      yield* refusal(limiter.consume(apiKey("k")))
      server.kill("SIGCONT")
      yield* eventually(() => expect(Effect.runSync(counting(limiter))).toBe("redis"))
      // Refused in memory, admitted by Redis, which saw only the checks sent to it.
      expect((yield* limiter.consume(apiKey("k"))).remaining).toBeGreaterThanOrEqual(2)
    }).pipe(Effect.scoped)
  )

  // Retries a check until the store counts it again, and reports how long that took.
  const untilCounted = (limiter: RateLimiter.RateLimiter, subject: RateLimiter.RateLimitSubject) =>
    Effect.timed(
      limiter.consume(subject).pipe(
        Effect.retry({
          while: (error) => error._tag === "RateLimiterUnavailable",
          schedule: Schedule.spaced("20 millis"),
          times: 250
        })
      )
    )

  it.live("recovers by itself when Redis restarts, or stops answering for a while", () =>
    Effect.gen(function* () {
      const { limiter, port, server } = yield* limiterOnOwnRedis("closed", 5)
      for (const remaining of [4, 3, 2]) expect((yield* limiter.consume(apiKey("k"))).remaining).toBe(remaining)
      yield* stop(server)
      // Killed: checks fail fast.
      const [down, error] = yield* Effect.timed(Effect.flip(limiter.consume(apiKey("k"))))
      expect(error._tag).toBe("RateLimiterUnavailable")
      expect(Duration.toMillis(down)).toBeLessThan(1_000)

      yield* Effect.scoped(
        Effect.gen(function* () {
          const server = yield* startRedisServer(port)
          const [restarted, state] = yield* untilCounted(limiter, apiKey("k"))
          // A fresh server without persistence: the count starts over (4 left; 3 when a check that timed out
          // under load was counted all the same), where the old count would leave 1.
          expect(state.remaining).toBeGreaterThanOrEqual(3)
          expect(Duration.toMillis(restarted)).toBeLessThan(3_000)

          // A server that stops answering is waited for no longer than the check's timeout.
          server.kill("SIGSTOP")
          const [stalled, timedOut] = yield* Effect.timed(Effect.flip(limiter.consume(apiKey("k"))))
          server.kill("SIGCONT")
          expect(timedOut._tag).toBe("RateLimiterUnavailable")
          expect(Duration.toMillis(stalled)).toBeGreaterThanOrEqual(200)
          expect(Duration.toMillis(stalled)).toBeLessThan(1_000)
          const [resumed, after] = yield* untilCounted(limiter, apiKey("k"))
          expect(after.remaining).toBeLessThan(4)
          expect(Duration.toMillis(resumed)).toBeLessThan(3_000)
          console.info(
            `RedisRateLimiter recovery: restart ${Duration.toMillis(restarted)} ms; ` +
              `down check ${Duration.toMillis(down)} ms, stalled check ${Duration.toMillis(stalled)} ms`
          )
        })
      )
    }).pipe(Effect.scoped)
  )
})
