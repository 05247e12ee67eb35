/**
 * How the service's replies are framed and written: the header fields every reply carries, and the
 * file-data operation's replies written on the Node response, a success streamed piece by piece or a
 * problem document. Both paths that serve the operation write through here, the hot route
 * (`FileDataRoute`) and the HttpApi handler (`Handlers.files`), and the platform middleware takes its
 * fields from here, so a header field and the way a reply is written exist once. What each failure means
 * (status, code, text) is `Problem`'s.
 *
 * @since 0.1.0
 */

import type { ServerResponse } from "node:http"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type FileDataError, FileDataJson, type FileDataReply } from "@filedata/core"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Instrumentation from "./Instrumentation.js"
import * as Problem from "./Problem.js"
import type * as RateLimitHeaders from "./RateLimitHeaders.js"

/**
 * Header fields every reply of the service carries.
 *
 * @since 0.1.0
 * @category constants
 */
export const securityHeaders = {
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
} as const

/**
 * The fields every reply carries, for the replies the platform writes (everything but the operation).
 *
 * @since 0.1.0
 * @category headers
 */
export const commonHeaders = (requestId: string): Record<string, string> => ({
  "x-content-type-options": securityHeaders["x-content-type-options"],
  "cache-control": securityHeaders["cache-control"],
  "x-request-id": requestId
})

/**
 * What frames one reply of the operation: the request's id and its view of the rate limiter.
 *
 * @since 0.1.0
 * @category models
 */
export interface Frame {
  readonly requestId: string
  readonly meter: RateLimitHeaders.Meter
}

/**
 * The header fields of a reply of the operation whose body is of `contentType`.
 *
 * @since 0.1.0
 * @category headers
 */
export const headers = (frame: Frame, contentType: string): Record<string, string | number> => {
  // Written out as one literal: V8 builds an object spread from `securityHeaders` in microseconds, a literal
  // in nanoseconds, and this runs for every request (docs/performance.md#what-was-found-and-what-was-done).
  const fields: Record<string, string | number> = {
    "x-content-type-options": securityHeaders["x-content-type-options"],
    "cache-control": securityHeaders["cache-control"],
    "content-type": contentType,
    "x-request-id": frame.requestId,
    "ratelimit-policy": frame.meter.policy
  }
  const standing = frame.meter.standing()
  if (standing !== undefined) fields.ratelimit = standing
  return fields
}

class ClientGone extends Data.TaggedError("ClientGone") {}

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

const writer = (response: ServerResponse, frame: Frame) => {
  // Made once, when a reply first has to wait: a reply of one piece never does.
  let drained: Effect.Effect<void, ClientGone> | undefined
  return (piece: string, last: boolean): Effect.Effect<void, ClientGone> =>
    Effect.suspend(() => {
      if (response.destroyed) return Effect.fail(new ClientGone())
      if (!response.headersSent) {
        const fields = headers(frame, "application/json")
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

/**
 * Writes `problem` as the reply. A reply that has begun has sent its status: it can only be cut; one that
 * has ended is left whole.
 *
 * @since 0.1.0
 * @category writing
 */
export const writeProblem = (response: ServerResponse, frame: Frame, problem: Problem.Problem): void => {
  if (response.headersSent) {
    if (!response.writableEnded) response.destroy()
    return
  }
  response.writeHead(problem.status, Object.assign(headers(frame, Problem.contentType), problem.headers))
  response.end(problem.body)
}

/**
 * The log line of a failure the service did not expect; the client gets only the 500 problem.
 *
 * @since 0.1.0
 * @category logging
 */
export const logUnexpected = (cause: Cause.Cause<unknown>): Effect.Effect<void> =>
  Effect.logError("unhandled failure", cause)

/**
 * A failure nothing else handled: logged, and answered with the 500 problem, or the reply cut if it began.
 *
 * @since 0.1.0
 * @category writing
 */
export const unexpected = (response: ServerResponse, frame: Frame, cause: Cause.Cause<unknown>): Effect.Effect<void> =>
  Effect.zipRight(
    logUnexpected(cause).pipe(Effect.annotateLogs("requestId", frame.requestId)),
    Effect.zipRight(
      Effect.sync(() => writeProblem(response, frame, Problem.internalError)),
      Instrumentation.problem(Problem.internalError.code)
    )
  )

/**
 * Writes the operation's outcome as its reply: the file data, in one `end` with `Content-Length` when it is
 * one piece, else streamed with back-pressure and stopped when the client goes away; or the problem of its
 * failure. An interruption alone writes nothing.
 *
 * @since 0.1.0
 * @category writing
 */
export const send = (
  response: ServerResponse,
  frame: Frame,
  outcome: Effect.Effect<FileDataReply.FileDataReply, FileDataError.GetFileDataError>
): Effect.Effect<void> =>
  outcome.pipe(
    Effect.flatMap((reply) => FileDataJson.writeTo(reply, writer(response, frame))),
    Effect.catchAll((failure) =>
      failure._tag === "ClientGone"
        ? Effect.void
        : Effect.suspend(() => {
            const problem = Problem.fromFailure(failure)
            writeProblem(response, frame, problem)
            return Instrumentation.problem(problem.code)
          })
    ),
    Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : unexpected(response, frame, cause)))
  )

/**
 * What the platform gets back from a handler that wrote its reply with {@link send}: the status, for the
 * request log line, and nothing to write, since the platform writes only on a Node response not yet ended.
 *
 * @since 0.1.0
 * @category conversions
 */
export const written = (response: ServerResponse): HttpServerResponse.HttpServerResponse => {
  // A reply that was cut is destroyed but not ended; ending it (nothing more reaches the socket) keeps the
  // platform from writing a reply of its own after it.
  if (!response.writableEnded) response.end()
  return HttpServerResponse.empty({ status: response.statusCode })
}
