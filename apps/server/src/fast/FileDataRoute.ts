/**
 * The hot route: the operations on a file (`Operations`) answered on `node:http` directly, ahead of the
 * platform's router, with the same rules and modules as the HttpApi handlers (`Operations`, `RequestBody`,
 * `Reply`), the use case run synchronously whenever nothing in it waits, and the request's line made from what its
 * reply returned (`Reply.Outcome`, `Middleware.requestLine`). Why: docs/performance.md#hot-route-beside-the-platform-router;
 * the folder's map: `README.md` beside this module.
 *
 * @since 0.1.0
 */

import type { IncomingMessage, ServerResponse } from "node:http"
import { FileRepository, Immediate, RateLimiter, SubmissionSignals, WaitingRequests } from "@filedata/core"
import { Logging, Telemetry } from "@filedata/runtime"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as LogLevel from "effect/LogLevel"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as ClientAddress from "../ClientAddress.js"
import * as Instrumentation from "../Instrumentation.js"
import * as Middleware from "../Middleware.js"
import * as Problem from "../Problem.js"
import * as ProtocolErrors from "../ProtocolErrors.js"
import * as RequestBody from "../RequestBody.js"
import * as PageCollection from "./internal/pageCollection.js"
import * as Operations from "./Operations.js"
import * as Reply from "./Reply.js"

// What `byPath` holds for a request target's path; the target is nearly always exactly the path.
const atTarget = <A>(byPath: ReadonlyMap<string, A>, url: string): A | undefined =>
  byPath.get(url) ?? byPath.get(Middleware.pathOf(url))

/**
 * Whether a request is for this route: a POST to one of the operations' paths, its target in origin or
 * absolute form; everything else goes to the platform's router.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matches = (request: IncomingMessage): boolean =>
  request.method === "POST" && request.url !== undefined && atTarget(Operations.byPath, request.url) !== undefined

const wentAsync = (cause: Cause.Cause<unknown>): boolean =>
  Cause.isDieType(cause) && Runtime.isAsyncFiberException(cause.defect)

/**
 * Runs a request's effect at once on `runtime` and handles how it ended: an `Exit` as it is, any other effect
 * on a fiber started in the caller's stack, which goes on by itself if it has to wait, its end handled the same
 * way when it comes. Any failure left over, the effect's own or one in writing its reply, is logged and
 * answered with the 500 problem when no reply was written yet (a reply that began is cut).
 *
 * @since 0.1.0
 * @category running
 */
export const runNowOrAsync = <R>(
  runtime: Runtime.Runtime<R>
): ((effect: Effect.Effect<void, unknown, R>, response: ServerResponse, frame: Reply.Frame) => void) => {
  const run = Runtime.runSyncExit(runtime)
  const settle = (exit: Exit.Exit<unknown, unknown>, response: ServerResponse, frame: Reply.Frame): void => {
    if (Exit.isSuccess(exit)) return
    const recovered = run(Reply.unexpected(response, frame, exit.cause))
    // Not even that could be written: at least the client is not left waiting.
    if (Exit.isFailure(recovered) && !wentAsync(recovered.cause) && !response.writableEnded) response.destroy()
  }
  // Forked, not run with `runSyncExit`: that builds an exception, a cause and a scheduler of its own for every
  // effect that waits, as every request does on PostgreSQL and Redis.
  const fork = Runtime.runFork(runtime)
  return (effect, response, frame) => {
    if (Immediate.isDone(effect)) return settle(effect, response, frame)
    const fiber = fork(effect)
    const exit = fiber.unsafePoll()
    if (exit === null) fiber.addObserver((end) => settle(end, response, frame))
    else settle(exit, response, frame)
  }
}

/**
 * What the route takes from the context: the core's ports, and the process's waiting requests.
 *
 * @since 0.2.0
 * @category models
 */
export type Requirements =
  | FileRepository.FileRepository
  | RateLimiter.RateLimiter
  | SubmissionSignals.SubmissionSignals
  | WaitingRequests.WaitingRequests

/**
 * Builds the route's request listener on the current runtime, which must hold the core's ports; it answers
 * the requests {@link matches} accepts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Operations.Options
): Effect.Effect<(request: IncomingMessage, response: ServerResponse) => void, never, Requirements> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<Requirements>()
    if (options.http?.collectSentPages === true) PageCollection.enable()
    // Run synchronously: with in-process adapters (SQLite, the memory limiter) a request needs no wait once
    // its body is in, so it is answered in the same tick, with no scheduling. An adapter that does wait
    // (PostgreSQL, Redis, a slow reader's `drain`) turns the run asynchronous and it finishes on its own.
    // Without Effect's runtime metrics: on by default, they update four global metrics (fiber counts and a
    // lifetime histogram) for every fiber, so for every request, and nothing here reads them.
    const runNow = runNowOrAsync(Runtime.disableRuntimeFlag(runtime, RuntimeFlags.RuntimeMetrics))
    // Each operation's requests are traced under its own route.
    const runs = new Map(
      yield* Effect.forEach(Operations.all, (operation) =>
        Effect.map(Instrumentation.traced(runNow, operation.path), (run) => [operation, run] as const)
      )
    )
    // The ports are taken once: providing a metered limiter to every request would copy the context each time.
    const start = Operations.starter(options, {
      files: Context.get(runtime.context, FileRepository.FileRepository),
      limiter: Context.get(runtime.context, RateLimiter.RateLimiter),
      signals: Context.get(runtime.context, SubmissionSignals.SubmissionSignals),
      waiting: Context.get(runtime.context, WaitingRequests.WaitingRequests)
    })
    const logsRequests = LogLevel.lessThanEqual(yield* FiberRef.get(FiberRef.currentMinimumLogLevel), LogLevel.Info)
    // The request line of a request answered at once is written by hand into the service's own batch, when that
    // logger is the only one (docs/performance.md#immediate-path).
    const ownLines = logsRequests ? Logging.ownWriter(yield* FiberRef.get(FiberRef.currentLoggers)) : undefined
    // Without a fiber only when nothing would see the difference: no spans to open, and the request line (if
    // written) going to the service's own logger.
    const { traces } = yield* Telemetry.Settings
    const immediate = !traces && (!logsRequests || ownLines !== undefined)

    return (request, response) => {
      const operation = atTarget(Operations.byPath, request.url ?? "")
      // Only for a caller that skipped `matches`: the server sends nothing else here.
      if (operation === undefined) {
        ProtocolErrors.writeOn(response, Middleware.requestId(request.headers["x-request-id"]), Problem.notFound)
        return
      }
      const started = Date.now()
      const { frame, answer } = start(
        operation,
        { headers: request.headers, remoteAddress: request.socket.remoteAddress },
        response
      )
      // The request's line, from what its reply said of it; the status is read once the reply is written.
      const line = (outcome: Reply.Outcome, now: number) =>
        Middleware.requestLine(
          outcome,
          "POST",
          request.url ?? operation.path,
          response.statusCode,
          now - started,
          frame.requestId,
          ClientAddress.logged(request.headers, request.socket.remoteAddress, options.trustProxy)
        )
      const logged = (outcome: Reply.Outcome) => Middleware.logRequest((now) => line(outcome, now))
      RequestBody.read(request, (body) => {
        // Run at once: with in-process adapters every step is already evaluated, and the request is answered here.
        const answered = immediate ? answer(body) : Effect.suspend(() => answer(body))
        if (Immediate.isDone(answered) && Exit.isSuccess(answered)) {
          if (ownLines !== undefined) {
            const now = Date.now()
            ownLines(Logging.infoLine("request", line(answered.value as Reply.Outcome, now), now))
          }
          return
        }
        // Otherwise the rest runs on the runtime, and its line is logged there.
        const run = runs.get(operation) ?? runNow
        run(logsRequests ? Effect.flatMap(answered, logged) : answered, response, frame)
      })
    }
  })
