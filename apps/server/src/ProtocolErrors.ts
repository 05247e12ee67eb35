/**
 * Replies to requests that fail at the HTTP layer, before any route sees them: a request Node cannot parse
 * (400), a request target (414) or header fields (431) over their limit, a request that does not arrive in time
 * (408), an HTTP/1.1 request without `Host` (400), an expectation other than `100-continue` (417). Node answers
 * these itself with a bare status line; here they are problem documents with the header fields every reply
 * carries, like every other error of the service.
 *
 * @since 0.1.0
 */

import { randomUUID } from "node:crypto"
import { type ServerResponse, STATUS_CODES } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import * as Reply from "./fast/Reply.js"
import * as Problem from "./Problem.js"

// The header fields of `problem` sent alone on its connection, which closes after it.
const fieldsOf = (problem: Problem.Problem, requestId: string): Record<string, string> =>
  Object.assign(
    Reply.commonHeaders(requestId, Problem.contentType),
    { "content-length": String(Buffer.byteLength(problem.body)), connection: "close" },
    problem.headers
  )

/**
 * Writes `problem` on a response no byte of which was written yet, and closes the connection after it: what
 * follows on the connection cannot be trusted to start a request.
 *
 * @since 0.1.0
 * @category writing
 */
export const writeOn = (response: ServerResponse, requestId: string, problem: Problem.Problem): void => {
  response.writeHead(problem.status, fieldsOf(problem, requestId))
  response.end(problem.body)
}

/**
 * The whole HTTP/1.1 reply of `problem` as bytes, for a connection that has no response object to write on.
 *
 * @since 0.1.0
 * @category writing
 */
export const bytesOf = (problem: Problem.Problem, requestId: string): Buffer => {
  const fields = Object.assign(fieldsOf(problem, requestId), { date: new Date().toUTCString() })
  const head = Object.entries(fields)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")
  return Buffer.from(`HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n${head}\r\n${problem.body}`)
}

/**
 * The longest request target the server reads, in bytes.
 *
 * @since 0.3.0
 * @category limits
 */
export const maxTargetBytes = 16 * 1024

/**
 * The most bytes of header fields the server reads, counted as {@link oversizedHead} counts them.
 *
 * @since 0.3.0
 * @category limits
 */
export const maxFieldBytes = 16 * 1024

/**
 * Node's `maxHeaderSize`: room for a head at both limits, which are then checked on the parsed request
 * (`oversizedHead`) whatever TCP segments it came in. Node sums target, names and values, and overflows at a
 * sum equal to its limit.
 *
 * @since 0.3.0
 * @category limits
 */
export const parserHeadBytes = maxTargetBytes + maxFieldBytes + 1

/**
 * The problem of a parsed request head over a limit: 414 for its target, else 431 for its header fields.
 *
 * @since 0.3.0
 * @category parsing
 */
export const oversizedHead = (request: {
  readonly url?: string | undefined
  readonly rawHeaders: ReadonlyArray<string>
}): Problem.Problem | undefined => {
  if (request.url !== undefined && request.url.length > maxTargetBytes) return Problem.uriTooLong
  // Counted as Node counts its limit: the names and values, without colons, spaces and CRLFs. Node decodes
  // both as latin1, so a character is a byte.
  let bytes = 0
  for (const part of request.rawHeaders) bytes += part.length
  return bytes > maxFieldBytes ? Problem.requestHeaderFieldsTooLarge : undefined
}

// A request line: a method token, then a space (a header field's name is followed by a colon).
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ /

/**
 * Whether a head over Node's limit (`parserHeadBytes`) overflowed in its request line. Node reports either as
 * one error, raised where the span that overflowed ends (`bytesParsed`) in the chunk it was reading
 * (`rawPacket`): the line it ends in starts after the chunk's last CRLF before there, or, in the connection's
 * first chunk (`firstChunk`), at its start. A line whose start came in an earlier chunk cannot be seen, and is
 * taken for a header field.
 *
 * @since 0.2.0
 * @category parsing
 */
export const overflowsInRequestLine = (
  error: { readonly rawPacket?: unknown; readonly bytesParsed?: unknown },
  firstChunk: boolean
): boolean => {
  if (!Buffer.isBuffer(error.rawPacket)) return false
  const end = typeof error.bytesParsed === "number" ? error.bytesParsed : error.rawPacket.length
  const parsed = error.rawPacket.subarray(0, end).toString("latin1")
  const lineEnd = parsed.lastIndexOf("\r\n")
  if (lineEnd === -1) return firstChunk && REQUEST_LINE.test(parsed)
  return REQUEST_LINE.test(parsed.slice(lineEnd + 2))
}

const problemOf = (
  error: Error & { readonly code?: string; readonly rawPacket?: unknown },
  socket: Duplex
): Problem.Problem => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW": {
      const read = (socket as { readonly bytesRead?: number }).bytesRead
      const firstChunk = Buffer.isBuffer(error.rawPacket) && read === error.rawPacket.length
      return overflowsInRequestLine(error, firstChunk) ? Problem.uriTooLong : Problem.requestHeaderFieldsTooLarge
    }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return Problem.requestTimeout
    default:
      return Problem.badRequest
  }
}

// The response Node is writing on the socket, if any: its own handler of these errors reads it the same way.
const responseOn = (socket: Duplex): ServerResponse | undefined =>
  (socket as { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined

/**
 * Sends `problem` on `socket` and closes it once the bytes are out; a socket that can no longer be written is
 * only closed.
 *
 * @since 0.1.0
 * @category writing
 */
export const sendOn = (socket: Duplex, problem: Problem.Problem, requestId: string): boolean => {
  if (!socket.writable) {
    socket.destroy()
    return false
  }
  socket.end(bytesOf(problem, requestId), () => socket.destroy())
  return true
}

/**
 * The listener for the server's `clientError` event: the problem of the error (400, 414, 431, 408) where the
 * socket can still carry it, else the socket destroyed. An error in a request that came after one still
 * being answered (pipelined) waits for that reply to go out first; an error in the request being answered,
 * whose reply has not begun, takes its place (its route then logs it); one whose reply has begun can only cut
 * it. `answered` is told each reply sent for a request no route saw, and the connection it was sent on.
 *
 * @since 0.1.0
 * @category listeners
 */
export const onClientError = (
  answered: (problem: Problem.Problem, requestId: string, socket: Duplex) => void
): ((error: Error & { readonly code?: string }, socket: Duplex) => void) => {
  // The parser reports every further chunk of a connection it gave up on as another error.
  const handled = new WeakSet<Duplex>()
  return (error, socket) => {
    if (handled.has(socket)) return
    handled.add(socket)
    if (error.code === "ECONNRESET") {
      socket.destroy()
      return
    }
    const problem = problemOf(error, socket)
    const requestId = randomUUID()
    const afterTheReplies = () => {
      const response = responseOn(socket)
      if (response === undefined) {
        if (sendOn(socket, problem, requestId)) answered(problem, requestId, socket)
      } else {
        // Node hands the socket to the next reply (or none) before this listener runs.
        response.once("finish", afterTheReplies)
      }
    }
    const answering = responseOn(socket)
    if (answering === undefined) afterTheReplies()
    else if (answering.req.complete && error.code !== "ERR_HTTP_REQUEST_TIMEOUT")
      answering.once("finish", afterTheReplies)
    else if (answering.headersSent) socket.destroy()
    else sendOn(socket, problem, requestId)
  }
}

/**
 * What a connection that has not completed its first request head in time gets: the 408 problem when it sent
 * part of one, else nothing but the close.
 *
 * @since 0.1.0
 * @category listeners
 */
export const onFirstRequestExpired =
  (answered: (problem: Problem.Problem, requestId: string, socket: Socket) => void): ((socket: Socket) => void) =>
  (socket) => {
    if (socket.bytesRead === 0) {
      socket.destroy()
      return
    }
    const requestId = randomUUID()
    if (sendOn(socket, Problem.requestTimeout, requestId)) answered(Problem.requestTimeout, requestId, socket)
  }
