/**
 * A `RateLimiter` kept in Redis, so every instance of the service counts against the same quotas: the memory
 * adapter's fixed window per subject, counted by one Lua script per check, or per request for its address and
 * key together (`consumeRequest`): atomic, one round trip. Redis must answer at build time; afterwards a check
 * never waits for it, and while it is away the failure mode decides (count in memory, refuse, or admit):
 * docs/operations.md#redis-outages.
 *
 * @since 0.1.0
 */
import { hash } from "node:crypto"
import { type FileData, FileDataError, RateLimiter } from "@filedata/core"
import { MemoryRateLimiter } from "@filedata/rate-limiter-memory"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { Redis } from "ioredis"

/**
 * What checks do while Redis cannot be reached: `RateLimiter.FailureMode` of the core.
 *
 * @since 0.1.0
 * @category models
 */
export type FailureMode = RateLimiter.FailureMode

/**
 * How to reach Redis and what to do when it cannot be reached.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly url: Redacted.Redacted<string>
  readonly policy: RateLimiter.RateLimitPolicy
  /** `memory` by default. */
  readonly failureMode?: FailureMode
  /** Prepended to every key, so several deployments (or tests) can share one Redis; `filedata:rate-limit:` by default. */
  readonly keyPrefix?: string
  /** How long one check may wait for Redis before the failure mode decides; 250 ms by default. */
  readonly timeoutMillis?: number
  /** While Redis is unreachable, how long the watcher waits between two attempts; 200 ms by default. */
  readonly probeIntervalMillis?: number
}

const DEFAULT_KEY_PREFIX = "filedata:rate-limit:"

const DEFAULT_TIMEOUT_MILLIS = 250

const DEFAULT_PROBE_INTERVAL_MILLIS = 200

const countingWhileAway = {
  memory: "memory-fallback",
  closed: "refusing",
  open: "uncounted"
} as const satisfies Record<FailureMode, RateLimiter.Counting>

const warningWhileAway: Record<FailureMode, string> = {
  memory: "Rate limit store unreachable: counting in this process's memory until it answers again",
  closed: "Rate limit store unreachable: refusing requests until it answers again",
  open: "Rate limit store unreachable: admitting requests without counting them until it answers again"
}

// The check, run atomically on the server: `window(key, ms)` counts in the key's window and gives the count and
// the milliseconds until the window closes.
//
// INCR never touches the expiry, so refused requests do not extend the window. A count of 1 opens the window:
// it closes a whole window from now, so its expiry is set and no PTTL is read. A later count reads the
// window's end, which only Redis knows (each subject's window opens with its first request). A counter
// without a positive time to live starts a new window: -1 is a key left without expiry by anything else,
// which must not lock its subject out forever, -2 cannot follow an INCR, and 0 is a window that closes this
// millisecond (Redis keeps a key until its expiry has passed; the memory adapter opens the next window at
// that instant).
const WINDOW_FUNCTION = `local function window(key, ms)
  local count = redis.call("INCR", key)
  if count == 1 then
    redis.call("PEXPIRE", key, ms)
    return 1, tonumber(ms)
  end
  local ttl = redis.call("PTTL", key)
  if ttl <= 0 then
    redis.call("SET", key, 1, "PX", ms)
    return 1, tonumber(ms)
  end
  return count, ttl
end
`

// One subject: KEYS[1] its counter, ARGV[1] the window in milliseconds.
const CONSUME_SCRIPT = `${WINDOW_FUNCTION}local count, ttl = window(KEYS[1], ARGV[1])
return {count, ttl}`

// A request (`consumeRequest`), in one round trip: KEYS[1] the address's counter, KEYS[2] the key's; ARGV the
// address's window, its limit and the key's window. The key is counted only when the address is within its quota.
const CONSUME_REQUEST_SCRIPT = `${WINDOW_FUNCTION}local count, ttl = window(KEYS[1], ARGV[1])
if count > tonumber(ARGV[2]) then
  return {count, ttl}
end
local keyCount, keyTtl = window(KEYS[2], ARGV[3])
return {count, ttl, keyCount, keyTtl}`

// Requests never wait on a connection (there is no offline queue), so these only bound how long a dead
// connect attempt or a silent socket holds up reconnecting, and how long the start waits for the first
// connection; they are roomier than a check's timeout so a TLS handshake to a distant Redis still completes.
const reconnectAfterMillis = (timeoutMillis: number): number => Math.max(4 * timeoutMillis, 1_000)

interface ScriptedRedis extends Redis {
  readonly consumeWindow: (key: string, windowMillis: number) => Promise<unknown>
  readonly consumeRequest: (
    addressKey: string,
    apiKeyKey: string,
    addressWindowMillis: number,
    addressLimit: number,
    apiKeyWindowMillis: number
  ) => Promise<unknown>
}

// Only the subject's hash is stored: Redis never holds an API key in plain text, and a 60 KiB key costs
// 43 bytes.
const keyOf = (prefix: string, subject: RateLimiter.RateLimitSubject): string => {
  const text = subject.scope === "apiKey" ? Redacted.value(subject.apiKey) : subject.address
  return `${prefix}${subject.scope}:${hash("sha256", text, "base64url")}`
}

// ioredis attaches the failed command (script text and arguments) to its errors; the message is what helps.
const toError = (cause: unknown): Error => new Error(cause instanceof Error ? cause.message : String(cause))

// A script's reply: a count and a time to live for each subject counted, `lengths` the numbers it may hold.
const decodeReply = (reply: unknown, lengths: ReadonlyArray<number>): Effect.Effect<ReadonlyArray<number>, Error> =>
  Array.isArray(reply) && lengths.includes(reply.length) && reply.every((item) => typeof item === "number")
    ? Effect.succeed(reply as ReadonlyArray<number>)
    : Effect.fail(new Error("Unexpected reply from the rate limit script"))

const connect = (url: Redacted.Redacted<string>, timeoutMillis: number) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const client = new Redis(Redacted.value(url), {
        commandTimeout: timeoutMillis,
        connectTimeout: reconnectAfterMillis(timeoutMillis),
        socketTimeout: reconnectAfterMillis(timeoutMillis),
        enableOfflineQueue: false,
        // A check caught by a dropped connection fails at once instead of waiting for reconnects, and is not
        // replayed afterwards: its caller has moved on, and a replay would count the request twice.
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        retryStrategy: (attempt) => Math.min(attempt * 50, 1_000),
        scripts: {
          consumeWindow: { lua: CONSUME_SCRIPT, numberOfKeys: 1 },
          consumeRequest: { lua: CONSUME_REQUEST_SCRIPT, numberOfKeys: 2 }
        }
      })
      // Connection errors reach the checks as failed commands, which log; without a listener ioredis would
      // print every reconnect attempt.
      client.on("error", () => {})
      return client as ScriptedRedis
    }),
    (client) =>
      Effect.tryPromise(() => client.quit()).pipe(
        Effect.timeout(timeoutMillis),
        Effect.ignore,
        // Also stops the reconnect timer when Redis was down and `quit` could not be sent.
        Effect.ensuring(Effect.sync(() => client.disconnect()))
      )
  )

// The first connection is awaited: a Redis that cannot be reached at start is a configuration to fix, not an
// outage to ride out (docs/operations.md#start-up). The client retries meanwhile, so a Redis that is just
// coming up is waited for until the connect timeout; the last connection error is the reason given.
const firstConnection = (
  client: Redis,
  timeoutMillis: number
): Effect.Effect<void, FileDataError.RateLimiterUnavailable> => {
  const waitMillis = reconnectAfterMillis(timeoutMillis)
  let lastError: Error | undefined
  const noteError = (error: Error) => {
    lastError = error
  }
  let ready = () => {}
  return Effect.async<void>((resume) => {
    if (client.status === "ready") return resume(Effect.void)
    ready = () => resume(Effect.void)
    client.once("ready", ready).on("error", noteError)
  }).pipe(
    Effect.timeoutFail({
      duration: waitMillis,
      onTimeout: () =>
        new FileDataError.RateLimiterUnavailable({
          cause: lastError ?? new Error(`Redis did not answer within ${waitMillis} ms`)
        })
    }),
    Effect.ensuring(Effect.sync(() => client.off("ready", ready).off("error", noteError)))
  )
}

/**
 * Connects to Redis and builds a limiter enforcing `policy`; the connection is closed with the scope.
 * Fails with `RateLimiterUnavailable`, carrying the client's last connection error, when Redis does not
 * answer within the connect timeout; once built, an outage only makes checks follow the failure mode until
 * Redis is back.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<RateLimiter.RateLimiter, FileDataError.RateLimiterUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const { policy } = options
    const failureMode = options.failureMode ?? "memory"
    const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX
    const timeoutMillis = options.timeoutMillis ?? DEFAULT_TIMEOUT_MILLIS
    const probeIntervalMillis = options.probeIntervalMillis ?? DEFAULT_PROBE_INTERVAL_MILLIS
    const longestWindowMillis = Math.max(policy.apiKey.windowMillis, policy.clientAddress.windowMillis)
    const memory = yield* MemoryRateLimiter.make(policy)
    const client = yield* connect(options.url, timeoutMillis)
    yield* firstConnection(client, timeoutMillis)

    // Checks read this on every request, so the switch costs them nothing; the watcher below does the waiting.
    let counting: "redis" | (typeof countingWhileAway)[FailureMode] = "redis"
    let outageCause = new Error("Redis is unreachable")
    const away = yield* Effect.makeLatch(false)
    const fallBack = (cause: Error): void => {
      if (counting !== "redis") return
      counting = countingWhileAway[failureMode]
      outageCause = cause
      away.unsafeOpen()
    }

    // A dropped connection is an outage even when no check is running to notice it, so health checks tell
    // the truth on an idle instance too.
    let lastError: Error | undefined
    const noteError = (error: Error) => {
      lastError = error
    }
    const ready = () => {
      lastError = undefined
    }
    const closed = () => fallBack(lastError ?? new Error("Connection to Redis closed"))
    yield* Effect.acquireRelease(
      Effect.sync(() => client.on("error", noteError).on("ready", ready).on("close", closed)),
      () => Effect.sync(() => client.off("error", noteError).off("ready", ready).off("close", closed))
    )

    const whileAway = (
      subject: RateLimiter.RateLimitSubject
    ): Effect.Effect<RateLimiter.RateLimitState, FileDataError.RateLimited | FileDataError.RateLimiterUnavailable> => {
      switch (failureMode) {
        case "memory":
          return memory.consume(subject)
        case "closed":
          return Effect.fail(new FileDataError.RateLimiterUnavailable({ cause: outageCause }))
        case "open": {
          const { limit, windowMillis } = policy[subject.scope]
          return Effect.succeed({
            scope: subject.scope,
            limit,
            windowMillis,
            remaining: limit,
            resetMillis: windowMillis
          })
        }
      }
    }

    const check = (key: string, windowMillis: number) =>
      Effect.flatMap(
        Effect.tryPromise({ try: () => client.consumeWindow(key, windowMillis), catch: toError }),
        (reply) => decodeReply(reply, [2])
      )

    // What Redis counted, as the subject's standing or its refusal.
    const verdict = (
      subject: RateLimiter.RateLimitSubject,
      count: number,
      ttl: number
    ): Effect.Effect<RateLimiter.RateLimitState, FileDataError.RateLimited> => {
      const { scope } = subject
      const { limit, windowMillis } = policy[scope]
      if (count <= limit) {
        return Effect.succeed({ scope, limit, windowMillis, remaining: limit - count, resetMillis: ttl })
      }
      const refused = Effect.fail(new FileDataError.RateLimited({ scope, limit, retryAfterMillis: ttl }))
      // A subject Redis refuses stays refused in memory should Redis go away before its window closes.
      return failureMode === "memory" ? Effect.zipRight(memory.exhaust(subject, ttl), refused) : refused
    }

    const viaRedis = (
      subject: RateLimiter.RateLimitSubject
    ): Effect.Effect<RateLimiter.RateLimitState, FileDataError.RateLimited | FileDataError.RateLimiterUnavailable> =>
      Effect.matchEffect(check(keyOf(prefix, subject), policy[subject.scope].windowMillis), {
        onFailure: (cause) => {
          fallBack(cause)
          return whileAway(subject)
        },
        onSuccess: ([count, ttl]) => verdict(subject, count as number, ttl as number)
      })

    const requestViaRedis = (
      address: string,
      apiKey: FileData.ApiKey
    ): Effect.Effect<RateLimiter.RequestCount, FileDataError.RateLimiterUnavailable> => {
      const addressSubject = { scope: "clientAddress", address } as const
      const keySubject = { scope: "apiKey", apiKey } as const
      const counted = Effect.flatMap(
        Effect.tryPromise({
          try: () =>
            client.consumeRequest(
              keyOf(prefix, addressSubject),
              keyOf(prefix, keySubject),
              policy.clientAddress.windowMillis,
              policy.clientAddress.limit,
              policy.apiKey.windowMillis
            ),
          catch: toError
        }),
        (reply) => decodeReply(reply, [2, 4])
      )
      return Effect.matchEffect(counted, {
        onFailure: (cause) => {
          fallBack(cause)
          return RateLimiter.consumeRequestInTurn(whileAway, address, apiKey)
        },
        onSuccess: ([count, ttl, keyCount, keyTtl]) =>
          Effect.all({
            clientAddress: Effect.either(verdict(addressSubject, count as number, ttl as number)),
            apiKey:
              keyCount === undefined || keyTtl === undefined
                ? Effect.succeed(undefined)
                : Effect.either(verdict(keySubject, keyCount, keyTtl))
          })
      })
    }

    // Asks Redis the way a check does, so a store that answers PING but cannot count is still away; the key
    // is no subject's (those are `scope:hash`).
    const probe = check(`${prefix}probe`, 1_000).pipe(Effect.retry(Schedule.spaced(probeIntervalMillis)))
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* away.await
          yield* Effect.logWarning(warningWhileAway[failureMode]).pipe(
            Effect.annotateLogs({ failureMode, cause: outageCause.message })
          )
          yield* probe
          away.unsafeClose()
          counting = "redis"
          yield* Effect.logInfo("Rate limit store reachable again: counting in Redis")
          // What the outage counted in memory is dropped once its windows have closed (`size` rotates the
          // generations), even when nothing counts in memory again.
          yield* Effect.race(away.await, Effect.zipRight(Effect.sleep(2 * longestWindowMillis), memory.size))
        })
      )
    )

    return RateLimiter.RateLimiter.of({
      policy,
      consume: (subject) => Effect.suspend(() => (counting === "redis" ? viaRedis(subject) : whileAway(subject))),
      consumeRequest: (address, apiKey) =>
        Effect.suspend(() =>
          counting === "redis"
            ? requestViaRedis(address, apiKey)
            : RateLimiter.consumeRequestInTurn(whileAway, address, apiKey)
        ),
      counting: Effect.sync(() => counting)
    })
  })

/**
 * The limiter as a layer; its Redis connection lives as long as the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<RateLimiter.RateLimiter, FileDataError.RateLimiterUnavailable> =>
  Layer.scoped(RateLimiter.RateLimiter, make(options))
