/**
 * How the service's replies are framed and written: the header fields every reply carries, and the replies of
 * the operations on a file (`Operations`) written on the Node response, a success streamed piece by piece (in
 * the coding `ContentCoding` negotiated, abandoned when the client stops reading) or a problem document. An
 * operation that writes its body through {@link writer} gets all of that. Both paths that serve the operations
 * write through here, the hot route (`FileDataRoute`) and the HttpApi handlers (`Handlers.files`), and the
 * platform middleware takes its fields from here, so a header field and the way a reply is written exist once.
 * The body writers and the waits they use are in `internal/bodyWriters.ts` and `internal/replyWaits.ts`. What
 * each failure means (status, code, text) is `Problem`'s.
 *
 * @since 0.1.0
 */

import type { ServerResponse } from "node:http"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type FileData, type FileDataError, Immediate, type ProblemCode } from "@filedata/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as ContentCoding from "../ContentCoding.js"
import * as Instrumentation from "../Instrumentation.js"
import * as Problem from "../Problem.js"
import type * as RateLimitHeaders from "../RateLimitHeaders.js"
import * as bodyWriters from "./internal/bodyWriters.js"
import * as replyWaits from "./internal/replyWaits.js"

/**
 * The header fields every reply of the service carries, with its body's `contentType` when given: the one
 * place they are assembled, for the operations' replies ({@link headers}), the platform's
 * (`Middleware`) and the protocol errors' (`ProtocolErrors`).
 *
 * @since 0.1.0
 * @category headers
 */
export const commonHeaders = (requestId: string, contentType?: string): Record<string, string> => {
  // One literal, not a spread of a shared object: docs/performance.md#small-per-request-costs
  const fields: Record<string, string> = {
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
    "x-request-id": requestId
  }
  if (contentType !== undefined) fields["content-type"] = contentType
  return fields
}

/**
 * What frames one reply of an operation: the request's id, its view of the rate limiter, the coding of its
 * body, and how long the reply may make no progress.
 *
 * @since 0.1.0
 * @category models
 */
export interface Frame {
  readonly requestId: string
  readonly meter: RateLimitHeaders.Meter
  /** Negotiated from the request's `Accept-Encoding` (`ContentCoding.negotiate`). */
  readonly coding: ContentCoding.Coding
  /** A streamed reply the socket accepts nothing of for this long is abandoned (`HTTP_SEND_TIMEOUT_MS`). */
  readonly sendTimeoutMillis: number
}

/**
 * The header fields of a reply of an operation whose body is of `contentType`.
 *
 * @since 0.1.0
 * @category headers
 */
export const headers = (frame: Frame, contentType: string): Record<string, string | number> => {
  const fields: Record<string, string | number> = commonHeaders(frame.requestId, contentType)
  fields.vary = "Accept-Encoding"
  fields["ratelimit-policy"] = frame.meter.policy
  const standing = frame.meter.standing()
  if (standing !== undefined) fields.ratelimit = standing
  return fields
}

/**
 * The client went away, or its reply was abandoned: nothing more can be written.
 *
 * @since 0.1.0
 * @category errors
 */
export const ClientGone = replyWaits.ClientGone

/**
 * @since 0.1.0
 * @category errors
 */
export type ClientGone = replyWaits.ClientGone

/**
 * What a success body is, for its header fields: its `Content-Type`, and any field of its own (an export's
 * `Content-Disposition`).
 *
 * @since 0.2.0
 * @category models
 */
export interface BodyKind {
  readonly contentType: string
  readonly fields?: Readonly<Record<string, string>> | undefined
}

/**
 * The body of most operations: JSON.
 *
 * @since 0.2.0
 * @category constants
 */
export const json: BodyKind = { contentType: "application/json" }

// Module-level, so a writer takes it without a closure per reply.
const bodyHeaders = (frame: Frame, kind: BodyKind): Record<string, string | number> => {
  const fields = headers(frame, kind.contentType)
  if (kind.fields !== undefined) Object.assign(fields, kind.fields)
  return fields
}

/**
 * A piece of a reply's body: text, or bytes already in UTF-8.
 *
 * @since 0.1.0
 * @category models
 */
export type Piece = string | Uint8Array

/**
 * Writes a success body of an operation, given piece by piece, in the frame's coding: a body of one piece
 * (`last` on the first call) in one `end` with `Content-Length`, a longer one streamed with back-pressure,
 * abandoned when the client accepts nothing for the send timeout. Fails with `ClientGone` once nothing more
 * can be written.
 *
 * @since 0.1.0
 * @category writing
 */
export const writer = (
  response: ServerResponse,
  frame: Frame,
  kind: BodyKind = json
): ((piece: Piece, last: boolean) => Effect.Effect<void, ClientGone>) =>
  frame.coding === "identity"
    ? bodyWriters.identityWriter(response, frame, kind, bodyHeaders)
    : bodyWriters.compressedWriter(response, frame, kind, bodyHeaders, frame.coding)

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
    Effect.sync(() => {
      writeProblem(response, frame, Problem.internalError)
      Instrumentation.countProblem(Problem.internalError.code)
    })
  )

/**
 * How an operation writes the body of its answer, piece by piece, through the `write` it is given
 * (`FileDataEncoder.writeTo`, `SubmissionsEncoder.writeTo`).
 *
 * @since 0.1.0
 * @category models
 */
export type BodyWriter<A> = (
  answer: A,
  write: (piece: Piece, last: boolean) => Effect.Effect<void, ClientGone>
) => Effect.Effect<void, ClientGone | FileDataError.StorageUnavailable>

/**
 * What a reply says of its request, for the request's log line (`Middleware.requestLine`): the file and the
 * key's user once known (the answer's file, or the refusal's `FileDataError.Subject`), and the problem's code
 * when the reply is one. Only the fields known are present, in that order.
 *
 * @since 0.2.0
 * @category models
 */
export type Outcome = {
  readonly fileId?: string
  readonly userId?: string
  readonly code?: ProblemCode.ProblemCode
}

/**
 * What every operation answers with: the file it read.
 *
 * @since 0.2.0
 * @category models
 */
export interface Answer {
  readonly file: FileData.StoredFile
}

const answered = (answer: Answer): Outcome => ({ fileId: answer.file.id, userId: answer.file.ownerId })

const nothingKnown: Outcome = {}
const noSubject: FileDataError.Subject = {}

// The outcome of a problem reply: the refusal's subject, else what the answer said (a failure while writing it).
const refused = (failure: FileDataError.GetFileDataError, known: Outcome, code: ProblemCode.ProblemCode): Outcome => {
  const subject: FileDataError.Subject = failure._tag === "InvalidRequest" ? noSubject : failure
  const fileId = subject.fileId ?? known.fileId
  const userId = subject.userId ?? known.userId
  if (fileId === undefined) return { code }
  return userId === undefined ? { fileId, code } : { fileId, userId, code }
}

// The problem of a failure, or the 500 of anything unexpected; an interruption alone writes nothing.
const settled = (
  response: ServerResponse,
  frame: Frame,
  written: Effect.Effect<void, ClientGone | FileDataError.GetFileDataError>,
  known: Outcome
): Effect.Effect<Outcome> =>
  written.pipe(
    Effect.as(known),
    Effect.catchAll((failure) =>
      failure._tag === "ClientGone"
        ? Effect.succeed(known)
        : Effect.sync(() => {
            const problem = Problem.fromFailure(failure)
            writeProblem(response, frame, problem)
            Instrumentation.countProblem(problem.code)
            return refused(failure, known, problem.code)
          })
    ),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.succeed(known)
        : Effect.as(unexpected(response, frame, cause), { ...known, code: Problem.internalError.code })
    )
  )

/**
 * Writes an operation's outcome as its reply: its answer through `writeTo` and {@link writer} (of the kind
 * `kindOf` says, JSON without it; in the frame's
 * coding, one `end` with `Content-Length` when it is one piece, else streamed with back-pressure, stopped when
 * the client goes away or accepts nothing for the send timeout); or the problem of its failure, uncompressed.
 * An interruption alone writes nothing. Both paths that serve the operations write through here, and log what
 * it returns (`Outcome`).
 *
 * @since 0.1.0
 * @category writing
 */
export const send = <A extends Answer>(
  response: ServerResponse,
  frame: Frame,
  outcome: Effect.Effect<A, FileDataError.GetFileDataError>,
  writeTo: BodyWriter<A>,
  kindOf?: ((answer: A) => BodyKind) | undefined
): Effect.Effect<Outcome> => {
  const write = (answer: A) => writeTo(answer, writer(response, frame, kindOf === undefined ? json : kindOf(answer)))
  // An answer already evaluated is written now; a reply written at once is an `Exit` (`Immediate`).
  if (Immediate.isDone(outcome) && Exit.isSuccess(outcome)) {
    const answer = outcome.value as A
    let written: Effect.Effect<void, ClientGone | FileDataError.StorageUnavailable>
    try {
      written = write(answer)
    } catch (defect) {
      written = Exit.die(defect)
    }
    return Immediate.isDone(written) && Exit.isSuccess(written)
      ? Immediate.succeed(answered(answer))
      : settled(response, frame, written, answered(answer))
  }
  return Effect.matchCauseEffect(outcome, {
    onFailure: (cause) => settled(response, frame, Effect.failCause(cause), nothingKnown),
    onSuccess: (answer) => settled(response, frame, write(answer), answered(answer))
  })
}

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
