/**
 * The operations on one file the server serves, one row each: the path, the core's use case, and the writer
 * of its reply body; and how one request to them begins ({@link starter}: its reply's frame and the use case's
 * input, built once). Both transports serve every row the same way (the hot route, `FileDataRoute`, and the
 * HttpApi handlers, `Handlers.files`): the body read by `RequestBody`, one limiter for both (so every
 * operation counts against the same per-key and per-address quotas), the reply written by `Reply.send`. An
 * operation added to `FileDataApi.FilesGroup` gets its row here and its handler in `Handlers.files`.
 *
 * @since 0.1.0
 */

import type { IncomingHttpHeaders, ServerResponse } from "node:http"
import { FileDataApi } from "@filedata/client"
import {
  ChangesEncoder,
  ExportEncoder,
  ExportSubmissions,
  FileDataEncoder,
  type FileDataError,
  type FileRequest,
  GetChanges,
  GetFileData,
  GetSubmissions,
  SubmissionsEncoder
} from "@filedata/core"
import { ServiceConfig } from "@filedata/runtime"
import { JoinedText } from "@filedata/sql"
import type * as Effect from "effect/Effect"
import * as ClientAddress from "../ClientAddress.js"
import * as ContentCoding from "../ContentCoding.js"
import * as Middleware from "../Middleware.js"
import * as RateLimitHeaders from "../RateLimitHeaders.js"
import * as Reply from "./Reply.js"

/**
 * The ports every operation runs on: those of `GetSubmissions`, which needs the most (the signals its waits wake
 * on, and the process's waiting requests).
 *
 * @since 0.2.0
 * @category models
 */
export type Ports = GetSubmissions.Ports

/**
 * One operation: where it is served, and how one request is answered.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operation {
  /** The request path, as in `FileDataApi`. */
  readonly path: string
  /**
   * Runs the use case for one request on `ports` and writes its reply, success or problem, on `response`; says
   * what the reply said of the request, for its log line.
   */
  readonly answer: (
    ports: Ports,
    input: FileRequest.Input,
    response: ServerResponse,
    frame: Reply.Frame
  ) => Effect.Effect<Reply.Outcome>
}

const make = <A extends Reply.Answer>(
  path: string,
  runWith: (
    ports: Ports,
    input: FileRequest.Input,
    response: ServerResponse
  ) => Effect.Effect<A, FileDataError.GetFileDataError>,
  writeTo: Reply.BodyWriter<A>,
  kindOf?: (answer: A) => Reply.BodyKind
): Operation => ({
  path,
  answer: (ports, input, response, frame) =>
    Reply.send(response, frame, runWith(ports, input, response), writeTo, kindOf)
})

// Tells when the connection of a reply not yet written closes: a client that gave up waiting.
const gone =
  (response: ServerResponse) =>
  (listener: () => void): (() => void) => {
    if (response.destroyed) {
      listener()
      return () => {}
    }
    response.once("close", listener)
    return () => {
      response.off("close", listener)
    }
  }

/**
 * `POST /api/v1/file-data`: the file's metadata, counters and every submission.
 *
 * @since 0.1.0
 * @category operations
 */
export const getFileData: Operation = make(FileDataApi.fileDataPath, GetFileData.runWith, FileDataEncoder.writeTo)

/**
 * `POST /api/v1/file-data/submissions`: the incremental read.
 *
 * @since 0.1.0
 * @category operations
 */
export const getSubmissions: Operation = make(
  FileDataApi.submissionsPath,
  (ports, input, response) => GetSubmissions.runWith(ports, { ...input, gone: gone(response) }),
  SubmissionsEncoder.writeTo
)

// The pieces the feed's reply cuts a domain page into grow no longer than the SQL adapters let a joined text
// grow: below the size at which V8 makes a string a large object
// (docs/performance.md#pieces-below-the-large-object-size).
const pieceLength = JoinedText.maxTextLength

/**
 * `POST /api/v1/file-data/changes`: the change feed; its waits end as the incremental read's do. A page the
 * adapter hands over as the domain's is written in pieces of at most about 64 Ki code units.
 *
 * @since 0.3.0
 * @category operations
 */
export const getChanges: Operation = make(
  FileDataApi.changesPath,
  (ports, input, response) => GetChanges.runWith(ports, { ...input, gone: gone(response) }),
  (reply, write) => ChangesEncoder.writeTo(reply, write, pieceLength)
)

/**
 * `POST /api/v1/file-data/export`: every submission, or a window of them, as CSV or NDJSON, as an attachment
 * named after the file.
 *
 * @since 0.2.0
 * @category operations
 */
export const exportSubmissions: Operation = make(
  FileDataApi.exportPath,
  ExportSubmissions.runWith,
  ExportEncoder.writeTo,
  (reply) => ({
    contentType: ExportEncoder.contentTypes[reply.format],
    fields: { "content-disposition": ExportEncoder.contentDisposition(reply.file.id, reply.format) }
  })
)

/**
 * Every operation.
 *
 * @since 0.1.0
 * @category operations
 */
export const all: ReadonlyArray<Operation> = [getFileData, getSubmissions, getChanges, exportSubmissions]

/**
 * The operation served at a path, if any.
 *
 * @since 0.1.0
 * @category operations
 */
export const byPath: ReadonlyMap<string, Operation> = new Map(all.map((operation) => [operation.path, operation]))

/**
 * What both transports are configured with.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly trustProxy: boolean
  /**
   * Without it, the default of `HTTP_SEND_TIMEOUT_MS`, and no collection after pages sent
   * (`HTTP_COLLECT_SENT_PAGES`, which the hot route turns on at start).
   */
  readonly http?: { readonly sendTimeoutMillis: number; readonly collectSentPages?: boolean | undefined } | undefined
}

/**
 * What a transport knows of a request before its body is read.
 *
 * @since 0.2.0
 * @category models
 */
export interface Arrival {
  readonly headers: IncomingHttpHeaders
  /** The socket's peer address, when the socket still has one. */
  readonly remoteAddress: string | undefined
  /** The id the platform's middleware assigned already, if any; else it is read from `X-Request-Id`. */
  readonly requestId?: string | undefined
}

/**
 * One request under way: its reply's frame, and the operation's answer once the body is at hand.
 *
 * @since 0.2.0
 * @category models
 */
export interface Exchange {
  readonly frame: Reply.Frame
  /** Runs the operation and writes its reply; says what the reply said of the request, for its log line. */
  readonly answer: (body: FileRequest.Input["body"]) => Effect.Effect<Reply.Outcome>
}

/**
 * The function that begins an exchange for each request, on ports held once: one limiter behind every
 * operation's meter, so they all count against the same quotas.
 *
 * @since 0.2.0
 * @category constructors
 */
export const starter = (
  options: Options,
  ports: Ports
): ((operation: Operation, arrival: Arrival, response: ServerResponse) => Exchange) => {
  const meter = RateLimitHeaders.meters(ports.limiter)
  const sendTimeoutMillis = options.http?.sendTimeoutMillis ?? ServiceConfig.defaultSendTimeoutMillis
  return (operation, { headers, remoteAddress, requestId }, response) => {
    const frame: Reply.Frame = {
      requestId: requestId ?? Middleware.requestId(headers["x-request-id"]),
      meter: meter(),
      coding: ContentCoding.negotiate(headers["accept-encoding"]),
      sendTimeoutMillis
    }
    const clientAddress = ClientAddress.of(headers, remoteAddress, options.trustProxy)
    const authorization = headers.authorization !== undefined
    return {
      frame,
      answer: (body) =>
        operation.answer(
          { files: ports.files, limiter: frame.meter.limiter, signals: ports.signals, waiting: ports.waiting },
          { clientAddress, body, authorization },
          response,
          frame
        )
    }
  }
}
