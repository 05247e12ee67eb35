/**
 * The hot route: `POST /api/v1/file-data` answered on `node:http` directly, ahead of the platform's router.
 *
 * Measured on the small bench profile, the platform's request and response plumbing cost several times
 * what the operation itself costs. This route keeps every rule where it was: the core use case decides,
 * `RequestBody`, `ClientAddress`, `Problem` and `FileDataJson` are the same modules the HttpApi handler
 * uses, and the HttpApi definition stays the contract (routing of every other request, OpenAPI, clients).
 * What it drops is per-request machinery: it runs the use case on a runtime built once, writes a reply
 * that fits one piece in a single `end`, and streams larger replies piece by piece, waiting for `drain`
 * when the client reads slowly and stopping the reads when the client goes away. See docs/performance.md.
 *
 * @since 0.1.0
 */

import type { IncomingMessage, ServerResponse } from "node:http"
import { type FileDataError, FileDataJson, FileRepository, GetFileData, RateLimiter } from "@filedata/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as LogLevel from "effect/LogLevel"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as ClientAddress from "./ClientAddress.js"
import { fileDataPath } from "./FileDataApi.js"
import * as Middleware from "./Middleware.js"
import * as Problem from "./Problem.js"
import * as RateLimitHeaders from "./RateLimitHeaders.js"
import * as RequestBody from "./RequestBody.js"

class ClientGone extends Data.TaggedError("ClientGone") {}

/**
 * Whether a request is for this route; everything else goes to the platform's router.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matches = (request: IncomingMessage): boolean =>
  request.method === "POST" && request.url !== undefined && request.url.split("?", 1)[0] === fileDataPath

// Every reply's header fields, written out as one literal: V8 builds an object spread from
// `securityHeaders` in microseconds, a literal in nanoseconds, and this runs for every request.
const headersOf = (
  requestId: string,
  meter: RateLimitHeaders.Meter,
  contentType: string
): Record<string, string | number> => {
  const headers: Record<string, string | number> = {
    "x-content-type-options": Middleware.securityHeaders["x-content-type-options"],
    "cache-control": Middleware.securityHeaders["cache-control"],
    "content-type": contentType,
    "x-request-id": requestId,
    "ratelimit-policy": meter.policy
  }
  const standing = meter.standing()
  if (standing !== undefined) headers.ratelimit = standing
  return headers
}

type Headers = (contentType: string) => Record<string, string | number>

// Waits until the response drains, or fails once the client is gone. Made by this function, outside the one
// that receives each piece: a closure made in that function shares its scope and so holds the piece, and the
// fiber's resumption kept these closures reachable across young collections. Measured on the first huge reply
// of a fresh server: with the wait made beside the piece, nearly every piece was promoted to the old
// generation (184 MB); made here, 2 MB (docs/performance.md).
const drainOf = (response: ServerResponse): Effect.Effect<void, ClientGone> =>
  Effect.async<void, ClientGone>((resume) => {
    let turn: NodeJS.Immediate | undefined
    // A reader as fast as the loopback drains within the same tick ("drain" comes on the next-tick
    // queue), so a big reply would hold the event loop from its first page to its last. Going on from
    // `setImmediate` lets other sockets be served between pages.
    const onDrain = () => {
      response.off("close", onClose)
      turn = setImmediate(() => resume(Effect.void))
    }
    const onClose = () => {
      response.off("drain", onDrain)
      resume(Effect.fail(new ClientGone()))
    }
    response.once("drain", onDrain)
    response.once("close", onClose)
    return Effect.sync(() => {
      if (turn !== undefined) clearImmediate(turn)
      response.off("drain", onDrain)
      response.off("close", onClose)
    })
  })

const write = (response: ServerResponse, headers: Headers) => {
  // Made once, when a reply first has to wait: a reply of one piece never does.
  let drained: Effect.Effect<void, ClientGone> | undefined
  return (piece: string, last: boolean): Effect.Effect<void, ClientGone> =>
    Effect.suspend(() => {
      if (response.destroyed) return Effect.fail(new ClientGone())
      if (!response.headersSent) {
        const fields = headers("application/json")
        if (last) fields["content-length"] = Buffer.byteLength(piece)
        response.writeHead(200, fields)
      }
      if (last) {
        response.end(piece)
        return Effect.void
      }
      if (response.write(piece)) return Effect.void
      drained ??= drainOf(response)
      return drained
    })
}

const sendProblem = (response: ServerResponse, headers: Headers, problem: Problem.Problem) =>
  Effect.sync(() => {
    // Once a reply has begun its status is sent; all that is left is to cut it short.
    if (response.headersSent) return response.destroy()
    response.writeHead(problem.status, Object.assign(headers(Problem.contentType), problem.headers))
    response.end(problem.body)
  })

/**
 * Builds the route's request listener on the current runtime, which must hold the core's ports.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly trustProxy: boolean
}): Effect.Effect<
  (request: IncomingMessage, response: ServerResponse) => void,
  never,
  FileRepository.FileRepository | RateLimiter.RateLimiter
> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<FileRepository.FileRepository | RateLimiter.RateLimiter>()
    // Run synchronously: with in-process adapters (SQLite, the memory limiter) a request needs no wait once
    // its body is in, so it is answered in the same tick, with no scheduling. An adapter that does wait
    // (PostgreSQL, Redis, a slow reader's `drain`) turns the run asynchronous and it finishes on its own.
    // Without Effect's runtime metrics: on by default, they update four global metrics (fiber counts and a
    // lifetime histogram) for every fiber, so for every request, and nothing here reads them.
    const run = Runtime.runSyncExit(Runtime.disableRuntimeFlag(runtime, RuntimeFlags.RuntimeMetrics))
    // The ports are taken once: providing a metered limiter to every request would copy the context each time.
    const files = Context.get(runtime.context, FileRepository.FileRepository)
    const meter = RateLimitHeaders.meters(Context.get(runtime.context, RateLimiter.RateLimiter))
    const logsRequests = LogLevel.lessThanEqual(yield* FiberRef.get(FiberRef.currentMinimumLogLevel), LogLevel.Info)

    const respond = (request: IncomingMessage, response: ServerResponse, requestId: string) => {
      const metered = meter()
      const { limiter } = metered
      const headers: Headers = (contentType) => headersOf(requestId, metered, contentType)
      return (body: Effect.Effect<unknown, FileDataError.InvalidRequest>) =>
        GetFileData.runWith(
          { files, limiter },
          { clientAddress: ClientAddress.of(request.headers, request.socket.remoteAddress, options.trustProxy), body }
        ).pipe(
          Effect.flatMap((reply) => FileDataJson.writeTo(reply, write(response, headers))),
          Effect.catchAll((failure) =>
            failure._tag === "ClientGone" ? Effect.void : sendProblem(response, headers, Problem.fromFailure(failure))
          ),
          Effect.catchAllCause((cause) =>
            Effect.zipRight(
              Effect.logError("unhandled failure", cause).pipe(Effect.annotateLogs("requestId", requestId)),
              sendProblem(response, headers, Problem.make(500, "internal_error", "The request could not be completed"))
            ).pipe(Effect.when(() => !Cause.isInterruptedOnly(cause)))
          )
        )
    }

    return (request, response) => {
      const requestId = Middleware.requestId(request.headers["x-request-id"])
      const answer = respond(request, response, requestId)
      if (!logsRequests) {
        RequestBody.read(request, (body) => run(answer(body)))
        return
      }
      const started = Date.now()
      RequestBody.read(request, (body) =>
        run(
          Effect.zipRight(
            answer(body),
            // The status is read once the reply is written, not when the request came in.
            Effect.suspend(() =>
              Middleware.logRequest("POST", request.url ?? fileDataPath, response.statusCode, started, requestId)
            )
          )
        )
      )
    }
  })
