// /docs and /openapi.json on the real server: Swagger UI's assets compressed per Accept-Encoding and cacheable
// for good under their versioned paths; the page, the document and the API's replies stay no-store.
import { readFileSync } from "node:fs"
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { createRequire } from "node:module"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import * as OpenApi from "@effect/platform/OpenApi"
import { expect, layer } from "@effect/vitest"
import { FileDataApi } from "@filedata/client"
import * as Effect from "effect/Effect"
import * as Documentation from "../src/Documentation.js"
import * as Server from "../src/Server.js"
import * as TestServer from "./utils/TestServer.js"

interface Raw {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

// node:http, not fetch: fetch asks for and undoes compression itself.
const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
  Effect.flatMap(Server.Address, ({ port }) =>
    Effect.async<Raw>((resume) => {
      const req = httpRequest({ host: "127.0.0.1", port, path, method, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () =>
          resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
        )
      })
      req.on("error", (error) => resume(Effect.die(error)))
      req.end()
    })
  )

const decoded = (reply: Raw): Buffer =>
  reply.headers["content-encoding"] === "br"
    ? brotliDecompressSync(reply.body)
    : reply.headers["content-encoding"] === "gzip"
      ? gunzipSync(reply.body)
      : reply.body

const require = createRequire(import.meta.url)
const bundlePath = Documentation.paths.assets.find((path) => path.endsWith(".js")) ?? ""
const cssPath = Documentation.paths.assets.find((path) => path.endsWith(".css")) ?? ""
const bundle = readFileSync(require.resolve("swagger-ui-dist/swagger-ui-bundle.js"))

layer(TestServer.layer({ fixture: { users: [], files: [] } }))("the documentation routes", (it) => {
  it.effect("Swagger UI's assets: compressed as asked, cacheable for good, the same bytes once decoded", () =>
    Effect.gen(function* () {
      expect(bundlePath).toMatch(/^\/docs\/swagger-ui\/\d+\.\d+\.\d+\/swagger-ui-bundle\.js$/)
      for (const [acceptEncoding, coding] of [
        ["br, gzip", "br"],
        ["gzip", "gzip"],
        ["identity", undefined]
      ] as const) {
        const reply = yield* get(bundlePath, { "accept-encoding": acceptEncoding })
        expect(reply.status).toBe(200)
        expect(reply.headers["content-encoding"]).toBe(coding)
        expect(reply.headers["content-type"]).toBe("text/javascript; charset=utf-8")
        expect(reply.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
        expect(reply.headers.vary).toBe("Accept-Encoding")
        expect(reply.headers["x-request-id"]).toBeDefined()
        expect(decoded(reply).equals(bundle)).toBe(true)
        if (coding !== undefined) expect(reply.body.length).toBeLessThan(bundle.length / 3)
      }
      const css = yield* get(cssPath, { "accept-encoding": "gzip" })
      expect(css.headers["content-type"]).toBe("text/css; charset=utf-8")
      expect(css.headers["content-encoding"]).toBe("gzip")
      const head = yield* get(bundlePath, { "accept-encoding": "br" }, "HEAD")
      expect(head.status).toBe(200)
      expect(head.body.length).toBe(0)
    })
  )

  it.effect("the page loads the versioned assets and the document; it and the API's replies stay no-store", () =>
    Effect.gen(function* () {
      const page = yield* get("/docs")
      expect(page.status).toBe(200)
      expect(page.headers["content-type"]).toMatch(/^text\/html/)
      expect(page.headers["cache-control"]).toBe("no-store")
      const html = page.body.toString("utf8")
      expect(html).toContain(`src=".${bundlePath}"`)
      expect(html).toContain(`href=".${cssPath}"`)
      expect(html).toContain('url: "./openapi.json"')
      // The description's problem table gets cell padding, which Swagger UI's own style sheet leaves out: without
      // it the header read "statuswhen" and "request_header_fields_too_large431" ran into its status (seen in
      // headless Chromium). The selectors are as specific as Swagger UI's `table tbody tr td:first-of-type`.
      expect(html).toMatch(
        /\.swagger-ui \.renderedMarkdown table thead tr th, \.swagger-ui \.renderedMarkdown table tbody tr td \{ padding: 4px 16px/
      )

      const document = yield* get("/openapi.json", { "accept-encoding": "br" })
      expect(document.headers["cache-control"]).toBe("no-store")
      expect(document.headers["content-encoding"]).toBe("br")
      expect(JSON.parse(decoded(document).toString("utf8"))).toEqual(OpenApi.fromApi(FileDataApi.FileDataApi))

      const health = yield* get("/health", { "accept-encoding": "br" })
      expect(health.headers["cache-control"]).toBe("no-store")
      expect((yield* get(`${bundlePath}x`)).status).toBe(404)
      const refused = yield* get(bundlePath, {}, "POST")
      expect(refused.status).toBe(405)
      expect(refused.headers["cache-control"]).toBe("no-store")
    })
  )
})
