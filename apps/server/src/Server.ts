/**
 * The HTTP server: the API, its documentation routes and the Node listener, for a given configuration.
 *
 * @since 0.1.0
 */

import { createServer } from "node:http"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type { FileRepository, RateLimiter } from "@filedata/core"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FileDataApi } from "./FileDataApi.js"
import * as Handlers from "./Handlers.js"
import * as Middleware from "./Middleware.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly port: number
  readonly host: string
  readonly trustProxy: boolean
}

/**
 * The API with its handlers; needs the core's ports.
 *
 * @since 0.1.0
 * @category layers
 */
export const apiLayer = (
  options: Pick<Options, "trustProxy">
): Layer.Layer<
  import("@effect/platform/HttpApi").Api,
  never,
  FileRepository.FileRepository | RateLimiter.RateLimiter
> => HttpApiBuilder.api(FileDataApi).pipe(Layer.provide([Handlers.files(options), Handlers.system]))

/**
 * Serves the API and its documentation on an `HttpServer`.
 *
 * @since 0.1.0
 * @category layers
 */
export const serveLayer = (
  options: Pick<Options, "trustProxy">
): Layer.Layer<
  never,
  never,
  | HttpServer.HttpServer
  | import("@effect/platform/HttpRouter").HttpRouter.DefaultServices
  | FileRepository.FileRepository
  | RateLimiter.RateLimiter
> =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(HttpApiBuilder.middleware(Middleware.make())),
    Layer.provide(HttpApiSwagger.layer({ path: Middleware.documentationPaths.swaggerUi })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: Middleware.documentationPaths.openApi })),
    Layer.provide(apiLayer(options))
  )

/**
 * The whole server on a Node listener; prints the contract's `listening on` line once requests are served.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<
  never,
  import("@effect/platform/HttpServerError").ServeError,
  FileRepository.FileRepository | RateLimiter.RateLimiter
> =>
  Layer.effectDiscard(
    Effect.flatMap(HttpServer.HttpServer, (server) =>
      Console.log(
        `listening on http://${options.host}:${server.address._tag === "TcpAddress" ? server.address.port : options.port}`
      )
    )
  ).pipe(
    Layer.provide(serveLayer(options)),
    Layer.provide(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
  )
