/**
 * The HTTP server: one Node listener that answers the hot route itself (`FileDataRoute`) and hands every
 * other request to the platform's handler for the `HttpApi` (health, OpenAPI, Swagger UI, 404, 405). Ahead
 * of both it bounds what one address may hold (`Connections`) and answers what fails before any route
 * (`ProtocolErrors`, `Expect: 100-continue`, framing and codings the server does not read) with problem
 * documents.
 *
 * @since 0.1.0
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { Duplex } from "node:stream"
import * as Etag from "@effect/platform/Etag"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpPlatform from "@effect/platform-node/NodeHttpPlatform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodePath from "@effect/platform-node/NodePath"
import { FileDataApi } from "@filedata/client"
import { type FileRepository, type RateLimiter, type SubmissionSignals, WaitingRequests } from "@filedata/core"
import {
  Environment,
  Listener,
  Logging,
  RateLimiting,
  type ServiceConfig,
  type StartupFailure,
  Storage,
  Telemetry,
  Webhooks
} from "@filedata/runtime"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as ClientAddress from "./ClientAddress.js"
import * as Connections from "./Connections.js"
import * as Documentation from "./Documentation.js"
import * as FileDataRoute from "./fast/FileDataRoute.js"
import * as Handlers from "./Handlers.js"
import * as Instrumentation from "./Instrumentation.js"
import * as Middleware from "./Middleware.js"
import * as Problem from "./Problem.js"
import * as ProtocolErrors from "./ProtocolErrors.js"
import * as RequestBody from "./RequestBody.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly port: number
  readonly host: string
  readonly trustProxy: boolean
  readonly http: HttpLimits
  /** The signal that stopped the process, if one did, for the log line the drain begins with. */
  readonly stopSignal?: (() => string | undefined) | undefined
  /** How many requests one key and one address may have waiting at once; `WaitingRequests.defaultLimits` without it. */
  readonly longPoll?: WaitingRequests.Limits | undefined
}

/**
 * What a slow or stuck client may hold of the server (the `HTTP_*` variables).
 *
 * @since 0.1.0
 * @category models
 */
export type HttpLimits = ServiceConfig.HttpLimits

/**
 * Where the server listens, once it does.
 *
 * @since 0.1.0
 * @category tags
 */
export class Address extends Context.Tag("@filedata/server/Address")<
  Address,
  { readonly hostname: string; readonly port: number }
>() {}

/**
 * The `HttpApi` with its handlers, documentation routes and middleware, registered on the API's router.
 *
 * @since 0.1.0
 * @category layers
 */
export const routesLayer = (
  options: Pick<Options, "trustProxy">
): Layer.Layer<
  import("@effect/platform/HttpApi").Api | HttpApiBuilder.Router | HttpApiBuilder.Middleware,
  never,
  FileRepository.FileRepository | RateLimiter.RateLimiter | SubmissionSignals.SubmissionSignals
> =>
  Layer.mergeAll(Documentation.layer, HttpApiBuilder.middleware(Middleware.make(options))).pipe(
    Layer.provideMerge(
      HttpApiBuilder.api(FileDataApi.FileDataApi).pipe(
        Layer.provide([Handlers.files(options), Handlers.webhooks(options), Handlers.system])
      )
    ),
    Layer.provideMerge(HttpApiBuilder.Router.Live),
    Layer.provideMerge(HttpApiBuilder.Middleware.layer)
  )

// Whether the request's framing announces a body: a `Content-Length` above zero, or any `Transfer-Encoding`.
const announcesBody = (request: IncomingMessage): boolean =>
  request.headers["transfer-encoding"] !== undefined || Number(request.headers["content-length"] ?? 0) > 0

// A body in a coding other than identity: the server reads bodies as they are, so it refuses one it would misread.
const encodedBody = (request: IncomingMessage): boolean => {
  const field = request.headers["content-encoding"]
  return (
    field !== undefined &&
    announcesBody(request) &&
    field.split(",").some((coding) => {
      const name = coding.trim().toLowerCase()
      return name !== "" && name !== "identity"
    })
  )
}

// What refuses a request on its head alone, before any route: a head over a limit, an HTTP/1.1 request without
// Host (RFC 9112, section 3.2), an HTTP/1.0 one with Transfer-Encoding (section 6.1: faulty framing), a coded body.
const refusalOf = (request: IncomingMessage): Problem.Problem | undefined => {
  const oversized = ProtocolErrors.oversizedHead(request)
  if (oversized !== undefined) return oversized
  if (request.httpVersionMajor === 1 && request.httpVersionMinor === 1) {
    if (request.headers.host === undefined) return Problem.missingHost
  } else if (request.headers["transfer-encoding"] !== undefined) {
    return Problem.transferEncodingInHttp10
  }
  return encodedBody(request) ? Problem.unsupportedContentEncoding : undefined
}

// While draining, a kept-alive connection whose reply has finished is closed this soon after. Node closes only
// the connections idle when the drain starts; one whose reply ends later would stay open until the
// keep-alive timeout and hold the exit that long.
const IDLE_SWEEP_MILLIS = 50

// The replies in flight, and during a drain how each ended: so that a stop leaves two lines in the log, one when
// it begins and one when it ends, and a drain is not taken for a crash. A counter and one shared listener per
// request ("close" is emitted once), nothing allocated.
const repliesTracker = () => {
  const replies = { inFlight: 0, draining: false, finished: 0, cut: 0 }
  function ended(this: ServerResponse): void {
    replies.inFlight--
    // During the drain: a reply sent whole, or cut (at the drain's bound, or by a client that went away).
    if (replies.draining) {
      if (this.writableFinished) replies.finished++
      else replies.cut++
    }
  }
  const track = (_request: IncomingMessage, response: ServerResponse): void => {
    replies.inFlight++
    response.on("close", ended)
  }
  return { replies, track }
}

const replyCount = (count: number) => `${count} ${count === 1 ? "reply" : "replies"}`

const listen = (server: Server, options: Options) =>
  Effect.gen(function* () {
    const { replies, track } = repliesTracker()
    for (const event of ["request", "checkContinue", "checkExpectation"]) server.prependListener(event, track)
    return yield* Effect.acquireRelease(
      Effect.mapError(Listener.listen(server, options), (cause) => new HttpServerError.ServeError({ cause })),
      () => drain(server, options, replies)
    )
  })

const drain = (server: Server, options: Options, replies: ReturnType<typeof repliesTracker>["replies"]) =>
  Effect.gen(function* () {
    const signal = options.stopSignal?.()
    const bound = options.http.drainTimeoutMillis
    const started = performance.now()
    yield* Logging.announce(
      `stopping${signal === undefined ? "" : ` on ${signal}`}: ${replyCount(replies.inFlight)} in flight, ` +
        `cut after ${bound} ms (HTTP_DRAIN_TIMEOUT_MS)`,
      { ...(signal === undefined ? {} : { signal }), repliesInFlight: replies.inFlight, drainTimeoutMs: bound }
    )
    replies.draining = true
    yield* Effect.async<void>((resume) => {
      const idle = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MILLIS).unref()
      const cut = setTimeout(() => server.closeAllConnections(), bound).unref()
      server.close(() => {
        clearInterval(idle)
        clearTimeout(cut)
        resume(Effect.void)
      })
    })
    const durationMs = Math.round(performance.now() - started)
    // Every connection is closed now, but a reply's "close" follows its socket's a turn later: after that turn, a
    // reply still counted in flight was cut with its connection.
    yield* Effect.async<void>((resume) => void setImmediate(() => resume(Effect.void)))
    const cut = replies.cut + replies.inFlight
    yield* Logging.announce(`stopped: ${replyCount(replies.finished)} finished, ${cut} cut, in ${durationMs} ms`, {
      repliesFinished: replies.finished,
      repliesCut: cut,
      durationMs
    })
  })

// What the platform's handler uses (HttpRouter's default services). `NodeHttpServer.layerContext` adds a command
// executor, a terminal and workers, whose modules every start would load
// (docs/performance.md#platform-services-the-handler-uses).
const platformServices = Layer.mergeAll(NodeHttpPlatform.layer, Etag.layerWeak, NodeFileSystem.layer, NodePath.layer)

/**
 * The whole server on a Node listener; prints the contract's `listening on` line once requests are served.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<
  Address,
  HttpServerError.ServeError,
  FileRepository.FileRepository | RateLimiter.RateLimiter | SubmissionSignals.SubmissionSignals
> =>
  Layer.scoped(
    Address,
    Effect.gen(function* () {
      const platform = yield* NodeHttpServer.makeHandler(yield* HttpApiBuilder.httpApp)
      const hot = yield* FileDataRoute.make(options)
      const runFork = Runtime.runFork(yield* Effect.runtime<never>())
      const { http } = options

      const server = createServer({
        headersTimeout: http.headersTimeoutMillis,
        // Node requires the request timeout to be at least the headers timeout.
        requestTimeout: Math.max(http.requestTimeoutMillis, http.headersTimeoutMillis),
        keepAliveTimeout: http.keepAliveTimeoutMillis,
        // Node only looks for expired requests this often; its default (30 s) would let a stuck client
        // outlive a short timeout by far.
        connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(http.headersTimeoutMillis / 4))),
        // Checked here instead (`missesHost`), so that the refusal is a problem document like every other.
        requireHostHeader: false,
        // Node's parser only tells its overflow from the chunk it was reading, so the limits of target and
        // header fields are checked on the parsed request (`refusalOf`) and the parser is given room for both.
        maxHeaderSize: ProtocolErrors.parserHeadBytes
      })
      server.maxConnections = http.maxConnections
      const meter = yield* Instrumentation.meter(server, Middleware.routeOf(), Middleware.allowedMethods())

      // The log line of a reply the server writes before any route sees the request, its problem counted.
      const logged = (
        problem: Problem.Problem,
        requestId: string,
        clientAddress: string,
        request?: IncomingMessage
      ) => {
        const started = Date.now()
        runFork(
          Effect.zipRight(
            Effect.sync(() => Instrumentation.countProblem(problem.code)),
            Middleware.logRequest((now) =>
              Middleware.requestLine(
                { code: problem.code },
                request?.method ?? "-",
                request?.url ?? "-",
                problem.status,
                now - started,
                requestId,
                clientAddress
              )
            )
          )
        )
      }
      const refuse = (request: IncomingMessage, response: ServerResponse, problem: Problem.Problem) => {
        const requestId = Middleware.requestId(request.headers["x-request-id"])
        ProtocolErrors.writeOn(response, requestId, problem)
        const clientAddress = ClientAddress.logged(request.headers, request.socket.remoteAddress, options.trustProxy)
        logged(problem, requestId, clientAddress, request)
      }
      // No request was read, so no forwarded address either: the connection's peer is the address known.
      const answered = (problem: Problem.Problem, requestId: string, socket: Duplex) => {
        meter.unrouted(socket, problem.status)
        const peer = (socket as { readonly remoteAddress?: string | undefined }).remoteAddress
        logged(problem, requestId, ClientAddress.logged({}, peer, false))
      }

      const route = (request: IncomingMessage, response: ServerResponse) =>
        FileDataRoute.matches(request) ? hot(request, response) : platform(request, response)

      const expired = ProtocolErrors.onFirstRequestExpired(answered)
      const guard = Connections.install(
        server,
        http,
        (socket) => {
          meter.closed("first_request_timeout")
          expired(socket)
        },
        () => meter.closed("address_limit")
      )
      server.on("clientError", ProtocolErrors.onClientError(answered))
      server.on(
        "request",
        meter.measured((request, response) => {
          guard.headReceived(request.socket)
          if (announcesBody(request)) Connections.lingerOnClose(request)
          const refusal = refusalOf(request)
          if (refusal !== undefined) refuse(request, response, refusal)
          else route(request, response)
        })
      )
      // `Expect: 100-continue` invites the body only when there is one and it will be read: a request whose header
      // fields already refuse it (oversized, not JSON) gets its problem at once, and the connection closes after
      // it, since the client then either never sends the body or sends one nobody reads.
      server.on(
        "checkContinue",
        meter.measured((request, response) => {
          guard.headReceived(request.socket)
          if (announcesBody(request)) Connections.lingerOnClose(request)
          const refusal = refusalOf(request)
          if (refusal !== undefined) {
            refuse(request, response, refusal)
            return
          }
          if (FileDataRoute.matches(request) && RequestBody.refusesByHeaders(request.headers)) {
            response.setHeader("connection", "close")
          } else if (announcesBody(request)) {
            response.writeContinue()
          }
          route(request, response)
        })
      )
      server.on(
        "checkExpectation",
        meter.measured((request, response) => {
          guard.headReceived(request.socket)
          refuse(request, response, ProtocolErrors.oversizedHead(request) ?? Problem.expectationFailed)
        })
      )
      yield* listen(server, options)
      // Runs before the listener's release, which waits for replies in flight: waiting requests are answered at
      // once with what they have (the empty page), and the drain goes on as for any reply.
      const waiting = yield* WaitingRequests.WaitingRequests
      yield* Effect.addFinalizer(() => waiting.stop)
      const address = server.address() as AddressInfo
      // A JSON line like every other, written whatever LOG_LEVEL says; the URL is followed by a space, so the
      // contract's line can be found with `listening on (http://\S+)`.
      yield* Logging.announce(`listening on http://${options.host}:${address.port} (pid ${process.pid})`)
      return { hostname: address.address, port: address.port }
    })
  ).pipe(
    Layer.provide(routesLayer(options)),
    Layer.provide(platformServices),
    // One registry for both paths, so the bounds count every waiting request of the process.
    Layer.provide(Layer.effect(WaitingRequests.WaitingRequests, WaitingRequests.make(options.longPoll)))
  )

/**
 * The whole service as `config` sets it up: {@link layer} over the storage, rate limiter and webhook ports,
 * webhook delivery, telemetry and logging; `environment`, the variables `config` was read from, is reported
 * first. `main.ts` launches it; the tests build it in their own process too.
 *
 * @since 0.2.0
 * @category layers
 */
export const service = (
  config: ServiceConfig.ServiceConfig,
  environment: Readonly<Record<string, string | undefined>>,
  stopSignal?: () => string | undefined
): Layer.Layer<
  Address,
  | HttpServerError.ServeError
  | StartupFailure.DependencyUnavailable
  | StartupFailure.CannotListen
  | ConfigError.ConfigError
> =>
  layer({ ...config, stopSignal }).pipe(
    // Delivery starts before the server listens, so /health says whether it runs from the first request.
    Layer.provide(Webhooks.delivery(config.webhooks)),
    Layer.provide(Telemetry.instrumentedPorts),
    Layer.provide([
      Storage.layer(config.storage),
      RateLimiting.layer(config.rateLimiting),
      Webhooks.ports(config.webhooks)
    ]),
    Layer.provide(Telemetry.layer(config.telemetry)),
    // Before anything is opened: a misspelled variable, then the settings in effect.
    Layer.provide(Layer.effectDiscard(Environment.report(config, environment))),
    Layer.provide(Logging.layer(config.logLevel))
  )
