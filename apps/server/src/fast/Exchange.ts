/**
 * One request to an operation on a file (`Operations`), as both transports take it: the frame of its reply
 * and the use case's input are built here, once, so the hot route (`FileDataRoute`) and the HttpApi handlers
 * (`Handlers.files`) answer alike.
 *
 * @since 0.2.0
 */

import type { IncomingHttpHeaders, ServerResponse } from "node:http"
import type { FileRequest } from "@filedata/core"
import { ServiceConfig } from "@filedata/runtime"
import type * as Effect from "effect/Effect"
import * as ClientAddress from "../ClientAddress.js"
import * as ContentCoding from "../ContentCoding.js"
import * as Middleware from "../Middleware.js"
import * as RateLimitHeaders from "../RateLimitHeaders.js"
import type * as Operations from "./Operations.js"
import type * as Reply from "./Reply.js"

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
  ports: Operations.Ports
): ((operation: Operations.Operation, arrival: Arrival, response: ServerResponse) => Exchange) => {
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
    return {
      frame,
      answer: (body) =>
        operation.answer(
          { files: ports.files, limiter: frame.meter.limiter, signals: ports.signals, waiting: ports.waiting },
          { clientAddress, body },
          response,
          frame
        )
    }
  }
}
