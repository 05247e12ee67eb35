/**
 * A `RateLimiter` kept in Redis, so every instance of the service counts against the same quotas.
 *
 * The semantics are the memory adapter's: a fixed window per subject that opens with the subject's first
 * request. One Lua script per check counts on the server, atomically and in one round trip, so instances
 * racing on one subject can never admit more than the limit between them.
 *
 * Redis must answer when the limiter is built. After that the limiter sits on every request's path, so it
 * never waits for Redis: there is no offline queue (a check while the connection is down fails at once), each
 * check has a short timeout, and an unreachable store is the configured failure mode's decision (admit with a
 * warning, or `RateLimiterUnavailable`), never a defect. The client keeps reconnecting in the background, so
 * the limiter recovers by itself when Redis returns.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import { FileDataError, RateLimiter } from "@filedata/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { Redis } from "ioredis"

/**
 * How to reach Redis and what to do when it cannot be reached.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly url: Redacted.Redacted<string>
  readonly policy: RateLimiter.RateLimitPolicy
  /** `open`: admit uncounted requests while Redis is unreachable; `closed`: refuse them with `RateLimiterUnavailable`. */
  readonly failureMode: "open" | "closed"
  /** Prepended to every key, so several deployments (or tests) can share one Redis; `filedata:rate-limit:` by default. */
  readonly keyPrefix?: string
  /** How long one check may wait for Redis before the failure mode decides; 250 ms by default. */
  readonly timeoutMillis?: number
}

const DEFAULT_KEY_PREFIX = "filedata:rate-limit:"

const DEFAULT_TIMEOUT_MILLIS = 250

// The check, run atomically on the server. KEYS[1] is the subject's counter, ARGV[1] the window in
// milliseconds; the reply is the count in the current window and the milliseconds until it closes.
//
// INCR never touches the expiry, so refused requests do not extend the window. A counter without a positive
// time to live starts a new window: -1 is a key this very INCR created (or one left without expiry by
// anything else, which must not lock its subject out forever), -2 cannot follow an INCR, and 0 is a window
// that closes this millisecond (Redis keeps a key until its expiry has passed; the memory adapter opens the
// next window at that instant).
const CONSUME_SCRIPT = `local count = redis.call("INCR", KEYS[1])
local ttl = redis.call("PTTL", KEYS[1])
if ttl <= 0 then
  redis.call("SET", KEYS[1], 1, "PX", ARGV[1])
  return {1, tonumber(ARGV[1])}
end
return {count, ttl}`

// One warning per outage window is enough for an operator; one per request would flood the logs.
const WARNING_INTERVAL_MILLIS = 10_000

// Requests never wait on a connection (there is no offline queue), so these only bound how long a dead
// connect attempt or a silent socket holds up reconnecting, and how long the start waits for the first
// connection; they are roomier than a check's timeout so a TLS handshake to a distant Redis still completes.
const reconnectAfterMillis = (timeoutMillis: number): number => Math.max(4 * timeoutMillis, 1_000)

interface ScriptedRedis extends Redis {
  readonly consumeWindow: (key: string, windowMillis: number) => Promise<unknown>
}

// Only the subject's hash is stored: Redis never holds an API key in plain text, and a 60 KiB key costs
// 43 bytes.
const keyOf = (prefix: string, subject: RateLimiter.RateLimitSubject): string => {
  const text = subject.scope === "apiKey" ? Redacted.value(subject.apiKey) : subject.address
  return `${prefix}${subject.scope}:${createHash("sha256").update(text).digest("base64url")}`
}

// ioredis attaches the failed command (script text and arguments) to its errors; the message is what helps.
const toError = (cause: unknown): Error => new Error(cause instanceof Error ? cause.message : String(cause))

const decodeReply = (reply: unknown): Effect.Effect<readonly [count: number, ttl: number], Error> =>
  Array.isArray(reply) && reply.length === 2 && typeof reply[0] === "number" && typeof reply[1] === "number"
    ? Effect.succeed([reply[0], reply[1]])
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
        scripts: { consumeWindow: { lua: CONSUME_SCRIPT, numberOfKeys: 1 } }
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
    const { failureMode, policy } = options
    const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX
    const timeoutMillis = options.timeoutMillis ?? DEFAULT_TIMEOUT_MILLIS
    const client = yield* connect(options.url, timeoutMillis)
    yield* firstConnection(client, timeoutMillis)

    let lastWarningAt = Number.NEGATIVE_INFINITY
    const warn = (cause: Error): Effect.Effect<void> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (now - lastWarningAt < WARNING_INTERVAL_MILLIS) return Effect.void
        lastWarningAt = now
        return Effect.logWarning(
          failureMode === "open"
            ? "Rate limit store unreachable: admitting requests without counting them"
            : "Rate limit store unreachable: refusing requests"
        ).pipe(Effect.annotateLogs({ failureMode, cause: cause.message, connection: client.status }))
      })

    const unavailable = (
      scope: FileDataError.RateLimitScope,
      { limit, windowMillis }: RateLimiter.Quota,
      cause: Error
    ): Effect.Effect<RateLimiter.RateLimitState, FileDataError.RateLimiterUnavailable> =>
      failureMode === "open"
        ? Effect.as(warn(cause), { scope, limit, windowMillis, remaining: limit, resetMillis: windowMillis })
        : Effect.zipRight(warn(cause), Effect.fail(new FileDataError.RateLimiterUnavailable({ cause })))

    return RateLimiter.RateLimiter.of({
      policy,
      consume: (subject) => {
        const { scope } = subject
        const quota = policy[scope]
        return Effect.tryPromise({
          try: () => client.consumeWindow(keyOf(prefix, subject), quota.windowMillis),
          catch: toError
        }).pipe(
          Effect.flatMap(decodeReply),
          Effect.matchEffect({
            onFailure: (cause) => unavailable(scope, quota, cause),
            onSuccess: ([count, ttl]) =>
              count > quota.limit
                ? Effect.fail(new FileDataError.RateLimited({ scope, limit: quota.limit, retryAfterMillis: ttl }))
                : Effect.succeed({
                    scope,
                    limit: quota.limit,
                    windowMillis: quota.windowMillis,
                    remaining: quota.limit - count,
                    resetMillis: ttl
                  })
          })
        )
      }
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
