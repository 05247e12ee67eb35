/**
 * The hot route: `POST /api/v1/file-data` answered on `node:http` directly, ahead of the platform's router.
 *
 * Measured on the small bench profile, the platform's request and response plumbing cost several times
 * what the operation itself costs. This route keeps every rule where it was: the core use case decides,
 * `RequestBody`, `ClientAddress`, `Problem` and `FileDataJson` are the same modules the HttpApi handler
 * uses, and the HttpApi definition stays the contract (routing of every other request, OpenAPI, clients).
 * What it drops is per-request machinery: it runs the use case on a runtime built once, writes a one-page
 * reply in a single `end`, and streams larger replies page by page, waiting for `drain` when the client
 * reads slowly and stopping the reads when the client goes away. See docs/performance.md.
 *
 * @since 0.1.0
 */

import type { IncomingMessage, ServerResponse } from "node:http"
import { FileDataJson, type FileRepository, GetFileData, RateLimiter } from "@filedata/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
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

const write = (response: ServerResponse, headers: () => Record<string, string>) => (piece: string, last: boolean) =>
  Effect.suspend((): Effect.Effect<void, ClientGone> => {
    if (response.destroyed) return Effect.fail(new ClientGone())
    if (!response.headersSent) {
      response.writeHead(200, {
        "content-type": "application/json",
        ...headers(),
        ...(last ? { "content-length": Buffer.byteLength(piece) } : {})
      })
    }
    if (last) {
      response.end(piece)
      return Effect.void
    }
    if (response.write(piece)) return Effect.void
    return Effect.async<void, ClientGone>((resume) => {
      const drained = () => {
        response.off("close", closed)
        resume(Effect.void)
      }
      const closed = () => {
        response.off("drain", drained)
        resume(Effect.fail(new ClientGone()))
      }
      response.once("drain", drained)
      response.once("close", closed)
      return Effect.sync(() => {
        response.off("drain", drained)
        response.off("close", closed)
      })
    })
  })

const sendProblem = (response: ServerResponse, headers: () => Record<string, string>, problem: Problem.Problem) =>
  Effect.sync(() => {
    // Once a reply has begun its status is sent; all that is left is to cut it short.
    if (response.headersSent) return response.destroy()
    response.writeHead(problem.status, {
      "content-type": Problem.contentType,
      ...headers(),
      ...problem.headers
    })
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
  Effect.map(Effect.runtime<FileRepository.FileRepository | RateLimiter.RateLimiter>(), (runtime) => {
    const run = Runtime.runFork(runtime)
    const meter = RateLimitHeaders.meters(Context.get(runtime.context, RateLimiter.RateLimiter))
    return (request, response) => {
      const requestId = Middleware.requestId(request.headers["x-request-id"])
      const { headers: rateLimitHeaders, limiter } = meter()
      const headers = () => ({ ...Middleware.securityHeaders, ...rateLimitHeaders(), "x-request-id": requestId })
      run(
        Effect.gen(function* () {
          const started = yield* Clock.currentTimeMillis
          yield* GetFileData.getFileData({
            clientAddress: ClientAddress.of(request.headers, request.socket.remoteAddress, options.trustProxy),
            body: RequestBody.readJson(request)
          }).pipe(
            Effect.provideService(RateLimiter.RateLimiter, limiter),
            Effect.flatMap((reply) => FileDataJson.writeTo(reply, write(response, headers))),
            Effect.catchAll((failure) =>
              failure._tag === "ClientGone" ? Effect.void : sendProblem(response, headers, Problem.fromFailure(failure))
            ),
            Effect.catchAllCause((cause) =>
              Effect.zipRight(
                Effect.logError("unhandled failure", cause),
                sendProblem(
                  response,
                  headers,
                  Problem.make(500, "internal_error", "The request could not be completed")
                )
              ).pipe(Effect.when(() => !Cause.isInterruptedOnly(cause)))
            )
          )
          yield* Middleware.logRequest("POST", request.url ?? fileDataPath, response.statusCode, started)
        }).pipe(Effect.annotateLogs("requestId", requestId))
      )
    }
  })
