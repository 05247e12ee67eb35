/**
 * What wraps every request the platform serves: a request id, one log line, the header fields every reply
 * carries (`Reply.commonHeaders`), and problem replies for unknown paths (404), known paths with another
 * method (405) and anything unexpected (500). The hot route writes the same id and log line through the
 * same functions (`requestId`, `requestLine`).
 *
 * @since 0.1.0
 */

import { randomUUID } from "node:crypto"
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { FileDataApi } from "@filedata/client"
import { RequestLog } from "@filedata/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as ClientAddress from "./ClientAddress.js"
import * as Documentation from "./Documentation.js"
import * as Reply from "./fast/Reply.js"
import * as Instrumentation from "./Instrumentation.js"
import * as Problem from "./Problem.js"

/**
 * The paths the service serves, each with the methods it answers there.
 *
 * @since 0.1.0
 * @category paths
 */
export const allowedMethods = (): ReadonlyMap<string, ReadonlyArray<string>> => {
  const methods = new Map<string, Array<string>>(
    [Documentation.paths.openApi, Documentation.paths.swaggerUi, ...Documentation.paths.assets].map(
      (path) => [path, ["GET", "HEAD"]] as const
    )
  )
  HttpApi.reflect(FileDataApi.FileDataApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      // The router answers HEAD wherever it answers GET.
      const added = endpoint.method === "GET" ? ["GET", "HEAD"] : [endpoint.method]
      methods.set(endpoint.path, [...(methods.get(endpoint.path) ?? []), ...added])
    }
  })
  return methods
}

// `scheme://authority` of a request target in absolute form (RFC 9112, section 3.2.2).
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i

/**
 * The request target in origin form (`/path?query`): a target in absolute form
 * (`http://host/path?query`), which RFC 9112 requires a server to accept, loses its scheme and authority.
 * Any other target (`*`, `host:port`) is returned as it is and matches no path.
 *
 * @since 0.1.0
 * @category paths
 */
export const originForm = (url: string): string => {
  if (url.charCodeAt(0) === 47) return url
  const authority = ABSOLUTE_FORM.exec(url)
  if (authority === null) return url
  const rest = url.slice(authority[0].length)
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`
}

/**
 * The path of a request target, without its query, whatever the target's form.
 *
 * @since 0.1.0
 * @category paths
 */
export const pathOf = (url: string): string => {
  const target = originForm(url)
  return target.split("?", 1)[0] ?? target
}

/**
 * The route a request target is measured and traced under: its path when the service serves that path, else
 * `unknown`, so that the routes stay the few the service has.
 *
 * @since 0.1.0
 * @category paths
 */
export const routeOf = (): ((url: string) => string) => {
  const methods = allowedMethods()
  return (url) => {
    const path = pathOf(url)
    return methods.has(path) ? path : Instrumentation.unknownRoute
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The caller's request id when it is a sane one, else a new one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const requestId = (incoming: string | ReadonlyArray<string> | undefined): string => {
  if (typeof incoming === "string" && REQUEST_ID.test(incoming)) return incoming
  const id = randomUUID()
  // Read once, so V8 makes it one flat string (about 70 bytes) rather than keeping the pieces Node joined it
  // from (about 490): the id lives as long as its request, and ten thousand may wait at once.
  id.charCodeAt(0)
  return id
}

/**
 * The id the middleware gave the request being served, for a handler that writes its reply itself;
 * `undefined` outside this middleware.
 *
 * @since 0.1.0
 * @category tags
 */
export class CurrentRequestId extends Context.Reference<CurrentRequestId>()(
  "@filedata/server/Middleware/CurrentRequestId",
  { defaultValue: (): string | undefined => undefined }
) {}

/**
 * The fields of a request's one log line, in the order every line has them: what is known of the request's
 * outcome (`known`: the file, the key's user, the problem's code), then the request's own. The one place a
 * request line is assembled, whichever path served the request and however the line is written.
 *
 * @since 0.2.0
 * @category logging
 */
export const requestLine = (
  known: Readonly<Record<string, string | number>> | undefined,
  method: string,
  url: string,
  status: number,
  durationMillis: number,
  requestId: string,
  clientAddress: string
): RequestLog.Fields => {
  const fields: RequestLog.Fields = known === undefined ? {} : Object.assign({}, known)
  fields.method = method
  fields.path = pathOf(url)
  fields.status = status
  fields.durationMs = durationMillis
  fields.requestId = requestId
  fields.clientAddress = clientAddress
  return fields
}

/**
 * Logs a request's one line at `info`, its fields made by `fields` (with {@link requestLine}) at the time of writing.
 *
 * @since 0.1.0
 * @category logging
 */
export const logRequest = (fields: (nowMillis: number) => RequestLog.Fields): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.logInfo("request", fields(now)))

/**
 * Adds what a reply said of its request (`Reply.Outcome`) to the line this middleware writes for it: for a
 * handler that wrote its reply itself.
 *
 * @since 0.2.0
 * @category logging
 */
export const noteOutcome = (outcome: Reply.Outcome): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const fields = fiber.getFiberRef(RequestLog.currentFields)
    if (fields !== undefined) Object.assign(fields, outcome)
    return Effect.void
  })

/**
 * Wraps the API's `HttpApp`, routing failures included; install it with `HttpApiBuilder.middleware`.
 *
 * @since 0.1.0
 * @category middleware
 */
export const make = (options: {
  /** As the server's: with `true` the log line's client address is the last `X-Forwarded-For` entry. */
  readonly trustProxy: boolean
}): ((app: HttpApp.Default) => HttpApp.Default) => {
  const methods = allowedMethods()
  const route = routeOf()

  const respond = (problem: Problem.Problem) =>
    Effect.as(Instrumentation.problem(problem.code), Problem.toResponse(problem))

  const fallback = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<unknown>) => {
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure) && (failure.value as { _tag?: string })._tag === "RouteNotFound") {
      const allowed = methods.get(pathOf(request.url))
      return respond(allowed === undefined ? Problem.notFound : Problem.methodNotAllowed(allowed))
    }
    return Effect.zipRight(Reply.logUnexpected(cause), respond(Problem.internalError))
  }

  // Made once, not per request: see GetFileData.runWith on generator functions made per call.
  const answer = Effect.fnUntraced(function* (
    app: HttpApp.Default,
    request: HttpServerRequest.HttpServerRequest,
    id: string
  ) {
    const started = yield* Clock.currentTimeMillis
    yield* RequestLog.begin
    // The router matches the target as it came; one in absolute form is routed by its path.
    const target = originForm(request.url)
    const routed =
      target === request.url
        ? app
        : Effect.provideService(app, HttpServerRequest.HttpServerRequest, request.modify({ url: target }))
    // The router forgives a trailing slash and letter case; the contract's paths are exact.
    const path = route(target)
    yield* Effect.annotateCurrentSpan({ "http.route": path, "filedata.request_id": id })
    const response =
      path === Instrumentation.unknownRoute
        ? yield* respond(Problem.notFound)
        : yield* Effect.catchAllCause(Effect.provideService(routed, CurrentRequestId, id), (cause) =>
            Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : fallback(request, cause)
          )
    const clientAddress = ClientAddress.logged(
      request.headers,
      Option.getOrUndefined(request.remoteAddress),
      options.trustProxy
    )
    const known = yield* FiberRef.get(RequestLog.currentFields)
    yield* logRequest((now) =>
      requestLine(known, request.method, request.url, response.status, now - started, id, clientAddress)
    )
    const common = Reply.commonHeaders(id)
    // A route that decides its own caching (the documentation's versioned assets) keeps it.
    const cacheControl = response.headers["cache-control"]
    return HttpServerResponse.setHeaders(
      response,
      cacheControl === undefined ? common : { ...common, "cache-control": cacheControl }
    )
  })

  return (app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const id = requestId(request.headers["x-request-id"])
      return answer(app, request, id).pipe(Effect.annotateLogs("requestId", id))
    })
}
