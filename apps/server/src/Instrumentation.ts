/**
 * What the server measures and traces of its requests (metrics on the Node listener, a problem's `code` on
 * its log line and counter, a span per hot-route request), hooked in so that what is off costs nothing per
 * request. The series and spans: docs/operations.md#what-to-monitor. No label, span attribute or log field
 * carries an API key or a body.
 *
 * @since 0.1.0
 */

import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import * as Headers from "@effect/platform/Headers"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import { ApiError } from "@filedata/client"
import { RequestLog } from "@filedata/core"
import { Telemetry } from "@filedata/runtime"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"

const requestDuration = Metric.histogram(
  "filedata_http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]),
  "Time from a request's arrival to the end of its reply, by route, method and status (0: no reply was sent)"
)

const repliesInFlight = Metric.counter("filedata_replies_in_flight", {
  description: "Requests received whose reply has not ended yet"
})

const sentBytes = Telemetry.counter(
  "filedata_replies_sent_bytes_total",
  "Bytes written to the connection for replies, header fields included, by route"
)

const problems = Telemetry.counter(
  "filedata_problems_total",
  "Problems by their code: problem replies, and failures that cut a reply already begun"
)

const connectionsClosed = Telemetry.counter(
  "filedata_connections_closed_total",
  "Connections the server closed before their first request, by reason: address_limit (the address held " +
    "HTTP_MAX_CONNECTIONS_PER_ADDRESS already), first_request_timeout (no request head in HTTP_FIRST_REQUEST_TIMEOUT_MS)"
)

/**
 * Replies abandoned because the client accepted nothing for the send timeout.
 *
 * @since 0.1.0
 * @category metrics
 */
export const repliesAbandoned = Metric.counter("filedata_replies_abandoned_total", {
  description: "Replies abandoned because the client accepted nothing of them for HTTP_SEND_TIMEOUT_MS",
  incremental: true
})

const noLabels: ReadonlyArray<MetricLabel.MetricLabel> = []

// A metric caches its series by the identity of the label array it is updated with: each distinct set is made
// once. Every part is bounded: routes by `routeOf`, methods by Node's parser, statuses and codes by the server.
const labelCache = <K>(make: (key: K) => ReadonlyArray<MetricLabel.MetricLabel>) => {
  const cache = new Map<K, ReadonlyArray<MetricLabel.MetricLabel>>()
  return (key: K): ReadonlyArray<MetricLabel.MetricLabel> => {
    let labels = cache.get(key)
    if (labels === undefined) {
      labels = make(key)
      cache.set(key, labels)
    }
    return labels
  }
}

// The client's list of codes is the list counted: one series each.
const problemLabels = Telemetry.labels("code", Object.keys(ApiError.problemCodes) as Array<ApiError.ProblemCode>)

/**
 * Counts a problem a request is answered with, for a reply that names it on its log line itself (`Reply.Outcome`).
 *
 * @since 0.2.0
 * @category problems
 */
export const countProblem = (code: ApiError.ProblemCode): void => {
  problems.unsafeUpdate(1, problemLabels[code])
}

/**
 * Names the problem a request is answered with on its log line (`code`, in the fiber's `RequestLog` record) and
 * counts it; call it in the request's fiber, where the problem is chosen.
 *
 * @since 0.1.0
 * @category problems
 */
export const problem = (code: ApiError.ProblemCode): Effect.Effect<void> =>
  Effect.zipRight(
    RequestLog.annotate("code", code),
    Effect.sync(() => countProblem(code))
  )

/**
 * A Node request listener.
 *
 * @since 0.1.0
 * @category models
 */
export type Listener = (request: IncomingMessage, response: ServerResponse) => void

/**
 * The route and method of what is not one the service serves, or not known.
 *
 * @since 0.1.0
 * @category constants
 */
export const unknownRoute = "unknown"

/**
 * Why the server closed a connection before its first request.
 *
 * @since 0.1.0
 * @category models
 */
export type ClosedBecause = "address_limit" | "first_request_timeout"

/**
 * The metrics of one listener, taken at start; each part does nothing when metrics are off.
 *
 * @since 0.1.0
 * @category models
 */
export interface Meter {
  /** `listener`, each request measured. */
  readonly measured: (listener: Listener) => Listener
  /**
   * Counts a reply written on `socket` for a request no listener saw: by its status, under the route and
   * method `unknown`, timed from when the connection began to wait for that request (its accept, or the end of
   * its previous reply).
   */
  readonly unrouted: (socket: Duplex, status: number) => void
  /** Counts a connection the server closed before its first request. */
  readonly closed: (because: ClosedBecause) => void
}

const unmetered: Meter = { measured: (listener) => listener, unrouted: () => {}, closed: () => {} }

const closedLabels = Telemetry.labels<ClosedBecause>("reason", ["address_limit", "first_request_timeout"])

const meterOf = (
  server: Server,
  routeOf: (url: string) => string,
  routes: ReadonlyMap<string, ReadonlyArray<string>>
): Meter => {
  const routeLabels = labelCache((route: string) => [MetricLabel.make("route", route)])
  const durationLabels = labelCache((key: string) => {
    const [route, method, status] = key.split(" ")
    return [
      MetricLabel.make("route", route ?? unknownRoute),
      MetricLabel.make("method", method ?? unknownRoute),
      MetricLabel.make("status", status ?? "0")
    ]
  })
  // When each connection began to wait for its next request, for the replies written without one.
  const waitingSince = new WeakMap<Duplex, number>()
  server.on("connection", (socket: Socket) => waitingSince.set(socket, performance.now()))
  // Every code's and reason's series from the start, at 0: a rate over a series that appears only with its
  // first problem misses that problem.
  for (const labels of Object.values(problemLabels)) problems.unsafeUpdate(0, labels)
  for (const labels of Object.values(closedLabels)) connectionsClosed.unsafeUpdate(0, labels)
  repliesInFlight.unsafeUpdate(0, noLabels)
  repliesAbandoned.unsafeUpdate(0, noLabels)
  // Each route's bytes, and its methods' successful replies, from the start too: reading a series registers it,
  // a histogram at count 0 included. Other statuses are not known in advance; they come with their first reply.
  for (const [route, methods] of routes) {
    sentBytes.unsafeUpdate(0, routeLabels(route))
    for (const method of methods) requestDuration.unsafeValue(durationLabels(`${route} ${method} 200`))
  }
  sentBytes.unsafeUpdate(0, routeLabels(unknownRoute))
  return {
    measured: (listener) => (request, response) => {
      const started = performance.now()
      const { socket } = request
      const bytesBefore = socket.bytesWritten
      repliesInFlight.unsafeUpdate(1, noLabels)
      // "close" comes once the reply has ended, or the connection was cut before.
      response.once("close", () => {
        const ended = performance.now()
        waitingSince.set(socket, ended)
        repliesInFlight.unsafeUpdate(-1, noLabels)
        const route = routeOf(request.url ?? "")
        const status = response.headersSent ? response.statusCode : 0
        requestDuration.unsafeUpdate((ended - started) / 1000, durationLabels(`${route} ${request.method} ${status}`))
        sentBytes.unsafeUpdate(socket.bytesWritten - bytesBefore, routeLabels(route))
      })
      listener(request, response)
    },
    unrouted: (socket, status) => {
      const now = performance.now()
      requestDuration.unsafeUpdate(
        (now - (waitingSince.get(socket) ?? now)) / 1000,
        durationLabels(`${unknownRoute} ${unknownRoute} ${status}`)
      )
    },
    closed: (because) => connectionsClosed.unsafeUpdate(1, closedLabels[because])
  }
}

/**
 * The metrics of `server`'s requests and connections when metrics are on (see the module's description);
 * parts that do nothing when they are off. `routeOf` names the route of a request target: a path the service
 * serves, or {@link unknownRoute}; `routes` lists those paths with their methods, whose series start at 0.
 *
 * @since 0.1.0
 * @category metrics
 */
export const meter = (
  server: Server,
  routeOf: (url: string) => string,
  routes: ReadonlyMap<string, ReadonlyArray<string>>
): Effect.Effect<Meter> =>
  Effect.map(Telemetry.Settings, (enabled) => (enabled.metrics ? meterOf(server, routeOf, routes) : unmetered))

/**
 * How the hot route runs a request's effect (`FileDataRoute.runNowOrAsync`).
 *
 * @since 0.1.0
 * @category models
 */
export type Run<R, F> = (effect: Effect.Effect<void, unknown, R>, response: ServerResponse, frame: F) => void

const inSpan = <R>(
  effect: Effect.Effect<void, unknown, R>,
  response: ServerResponse,
  route: string,
  requestId: string
): Effect.Effect<void, unknown, R> =>
  Effect.useSpan(
    "http.server POST",
    {
      kind: "server",
      // A caller's W3C `traceparent` (or B3) makes this request part of its trace, as on the platform's path.
      parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(Headers.fromInput(response.req.headers))),
      captureStackTrace: false,
      attributes: {
        "http.request.method": "POST",
        "http.route": route,
        "url.path": route,
        "filedata.request_id": requestId
      }
    },
    (span) =>
      Effect.ensuring(
        Effect.withParentSpan(effect, span),
        Effect.sync(() => span.attribute("http.response.status_code", response.statusCode))
      )
  )

/**
 * `run` with each request's effect in a server span when traces are exported; `run` itself otherwise.
 *
 * @since 0.1.0
 * @category tracing
 */
export const traced = <R, F extends { readonly requestId: string }>(
  run: Run<R, F>,
  route: string
): Effect.Effect<Run<R, F>> =>
  Effect.map(Telemetry.Settings, (enabled) =>
    enabled.traces
      ? (effect, response, frame) => run(inSpan(effect, response, route, frame.requestId), response, frame)
      : run
  )
