/**
 * The API's documentation: the OpenAPI document at `/openapi.json` and Swagger UI at `/docs`. The page is
 * small and loads Swagger UI's script and style sheet from paths that carry swagger-ui-dist's version, so
 * they are served compressed (`br` or `gzip`, per `Accept-Encoding`) and cacheable for good: they never
 * change under one path. The page and the document stay `no-store` like every other reply.
 *
 * @since 0.1.0
 */

import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { promisify } from "node:util"
import { brotliCompress, gzip, constants as zlibConstants } from "node:zlib"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as ContentCoding from "./ContentCoding.js"

const require = createRequire(import.meta.url)
const swaggerUiVersion: string = require("swagger-ui-dist/package.json").version

const assetsPath = `/docs/swagger-ui/${swaggerUiVersion}` as const

interface Asset {
  readonly path: `/${string}`
  readonly file: string
  readonly contentType: string
}

const assets: ReadonlyArray<Asset> = [
  {
    path: `${assetsPath}/swagger-ui-bundle.js`,
    file: "swagger-ui-dist/swagger-ui-bundle.js",
    contentType: "text/javascript; charset=utf-8"
  },
  {
    path: `${assetsPath}/swagger-ui.css`,
    file: "swagger-ui-dist/swagger-ui.css",
    contentType: "text/css; charset=utf-8"
  }
]

/**
 * Paths served beside the API definition; each answers GET and HEAD.
 *
 * @since 0.1.0
 * @category constants
 */
export const paths = {
  openApi: "/openapi.json",
  swaggerUi: "/docs",
  assets: assets.map((asset) => asset.path)
} as const

/**
 * How long a browser or proxy may keep an asset: a year, never revalidated, since its path names its
 * version.
 *
 * @since 0.1.0
 * @category constants
 */
export const assetCacheControl = "public, max-age=31536000, immutable"

const brotli = promisify(brotliCompress)
const gzipAsync = promisify(gzip)

// Quality 9 is within a few percent of 11 at a thirtieth of the time; the work runs off the event loop,
// once per asset and coding, on the first request that asks for it.
const compress = (body: Uint8Array, coding: "br" | "gzip"): Promise<Uint8Array> =>
  coding === "br"
    ? brotli(body, {
        params: {
          [zlibConstants.BROTLI_PARAM_QUALITY]: 9,
          [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.byteLength
        }
      })
    : gzipAsync(body, { level: 9 })

interface Variants {
  readonly identity: Effect.Effect<Uint8Array>
  readonly br: Effect.Effect<Uint8Array>
  readonly gzip: Effect.Effect<Uint8Array>
}

const variants = (load: Effect.Effect<Uint8Array>): Effect.Effect<Variants> =>
  Effect.gen(function* () {
    const identity = yield* Effect.cached(load)
    const coded = (coding: "br" | "gzip") =>
      Effect.cached(Effect.flatMap(identity, (body) => Effect.promise(() => compress(body, coding))))
    return { identity, br: yield* coded("br"), gzip: yield* coded("gzip") }
  })

const negotiated = (
  body: Variants,
  contentType: string,
  headers: Record<string, string>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const coding = ContentCoding.negotiate(request.headers["accept-encoding"])
    return Effect.map(body[coding], (bytes) =>
      HttpServerResponse.uint8Array(bytes, {
        contentType,
        headers: {
          ...headers,
          vary: "Accept-Encoding",
          ...(coding === "identity" ? {} : { "content-encoding": coding })
        }
      })
    )
  })

const page = (title: string): string => `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${title.replace(/[<>&"]/g, "")} API</title>
  <link rel="stylesheet" href=".${assetsPath}/swagger-ui.css" />
  <style>
    /* Swagger UI gives a description's Markdown tables no cell padding: header cells ran together ("statuswhen").
       Its "table tbody tr td:first-of-type" rule outranks a shorter selector, so the body cells repeat its length. */
    .swagger-ui .renderedMarkdown table thead tr th, .swagger-ui .renderedMarkdown table tbody tr td { padding: 4px 16px 4px 0; text-align: left; vertical-align: baseline; }
  </style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src=".${assetsPath}/swagger-ui-bundle.js"></script>
  <script>
    window.onload = () => {
      window.ui = SwaggerUIBundle({ url: ".${paths.openApi}", dom_id: "#swagger-ui", deepLinking: true })
    }
  </script>
</body>
</html>
`

/**
 * Registers the document, the page and the assets on the API's router.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, HttpApi.Api> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const { api } = yield* HttpApi.Api
    // Built on the first request that needs it, not at start (docs/performance.md#documentation-built-when-asked).
    const document = yield* Effect.cached(Effect.sync(() => OpenApi.fromApi(api)))
    const spec = Effect.map(document, (openApi) => new TextEncoder().encode(JSON.stringify(openApi)))
    const html = yield* Effect.cached(Effect.map(document, (openApi) => page(openApi.info.title)))
    yield* router.get(paths.openApi, negotiated(yield* variants(spec), "application/json", {}))
    yield* router.get(
      paths.swaggerUi,
      Effect.map(html, (body) => HttpServerResponse.html(body))
    )
    for (const asset of assets) {
      const load = Effect.promise(() => readFile(require.resolve(asset.file)))
      yield* router.get(
        asset.path,
        negotiated(yield* variants(load), asset.contentType, { "cache-control": assetCacheControl })
      )
    }
  })
)
