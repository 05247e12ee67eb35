// How the hot route's run of a request can end, each way driven on a real Node server: done at once, gone
// asynchronous, failed or died before, while or after the reply was written.
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { expect, layer } from "@effect/vitest"
import { MemoryRateLimiter } from "@filedata/rate-limiter-memory"
import { ServiceConfig } from "@filedata/runtime"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as FileDataRoute from "../src/fast/FileDataRoute.js"
import type * as Reply from "../src/fast/Reply.js"
import * as RateLimitHeaders from "../src/RateLimitHeaders.js"
import * as TestServer from "./utils/TestServer.js"

const later = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

const reply = (response: ServerResponse) =>
  Effect.sync(() => {
    response.writeHead(200, { "content-type": "text/plain" })
    response.end("done")
  })

// Each path of the test server runs one of these.
const runs: Record<string, (response: ServerResponse) => Effect.Effect<void, unknown>> = {
  "/now": reply,
  "/later": (response) => Effect.zipRight(later, reply(response)),
  "/fails-now": () => Effect.fail("refused"),
  "/dies-now": () => Effect.die(new Error("broken")),
  "/dies-later": () => Effect.zipRight(later, Effect.die(new Error("broken later"))),
  "/interrupted": () => Effect.interrupt,
  "/dies-after-reply": (response) => Effect.zipRight(reply(response), Effect.die(new Error("broken after"))),
  "/dies-mid-reply": (response) =>
    Effect.zipRight(
      Effect.sync(() => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.write("part")
      }),
      Effect.die(new Error("broken mid-reply"))
    )
}

const lines: Array<{ message: unknown; logLevel: string; annotations: Record<string, unknown> }> = []
const capture = Logger.map(Logger.jsonLogger, (line) => {
  lines.push(JSON.parse(line))
})

class Base extends Context.Tag("RunNowOrAsync.test/Base")<
  Base,
  { readonly url: string; readonly pending: Set<string> }
>() {}

const server = Layer.scoped(
  Base,
  Effect.gen(function* () {
    const run = FileDataRoute.runNowOrAsync(yield* Effect.runtime<never>())
    const meter = RateLimitHeaders.meters(yield* MemoryRateLimiter.make(TestServer.generous))
    // The paths whose run returned with nothing written yet, that is, went on asynchronously.
    const pending = new Set<string>()
    const listener = createServer((request, response) => {
      const path = request.url ?? "/"
      const frame: Reply.Frame = {
        requestId: `id${path.replaceAll("/", "-")}`,
        meter: meter(),
        coding: "identity",
        sendTimeoutMillis: ServiceConfig.defaultSendTimeoutMillis
      }
      run((runs[path] ?? reply)(response), response, frame)
      if (!response.headersSent) pending.add(path)
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => {
        listener.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          listener.closeAllConnections()
          listener.close(() => resume(Effect.void))
        })
    )
    return { url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}`, pending }
  })
).pipe(Layer.provide(Logger.replace(Logger.defaultLogger, capture)))

const get = (path: string) =>
  Effect.flatMap(Base, ({ url }) =>
    Effect.promise(async () => {
      // A reply that was cut fails the fetch, or its body, depending on how much of it got out.
      const response = await fetch(`${url}${path}`).catch(() => undefined)
      const text = await response?.text().catch(() => undefined)
      return { status: response?.status, headers: response?.headers ?? new Headers(), text }
    })
  )

const errorsOf = (path: string) =>
  lines.filter((line) => line.logLevel === "ERROR" && line.annotations.requestId === `id${path.replaceAll("/", "-")}`)

layer(server, { excludeTestServices: true })("FileDataRoute.runNowOrAsync", (it) => {
  it.effect("a run that ends at once: the reply it wrote, nothing logged", () =>
    Effect.gen(function* () {
      const answer = yield* get("/now")
      expect(answer).toMatchObject({ status: 200, text: "done" })
      expect((yield* Base).pending.has("/now")).toBe(false)
      expect(errorsOf("/now")).toEqual([])
    })
  )

  it.effect("a run that goes asynchronous carries on by itself: its reply, nothing logged", () =>
    Effect.gen(function* () {
      const answer = yield* get("/later")
      expect(answer).toMatchObject({ status: 200, text: "done" })
      expect((yield* Base).pending.has("/later")).toBe(true)
      expect(errorsOf("/later")).toEqual([])
    })
  )

  for (const path of ["/fails-now", "/dies-now", "/dies-later", "/interrupted"]) {
    it.effect(`${path.slice(1)}: logged, and the 500 problem with the reply's fields`, () =>
      Effect.gen(function* () {
        const answer = yield* get(path)
        expect(answer.status).toBe(500)
        expect(answer.headers.get("content-type")).toBe("application/problem+json")
        expect(answer.headers.get("x-request-id")).toBe(`id${path.replaceAll("/", "-")}`)
        expect(answer.headers.get("cache-control")).toBe("no-store")
        expect(answer.headers.get("ratelimit-policy")).toMatch(/^"api-key";q=\d+;w=\d+/)
        expect(JSON.parse(answer.text ?? "")).toMatchObject({ status: 500, code: "internal_error" })
        expect(errorsOf(path)).toHaveLength(1)
        expect(errorsOf(path)[0]?.message).toBe("unhandled failure")
      })
    )
  }

  it.effect("a defect after the reply was written: logged, the reply left whole", () =>
    Effect.gen(function* () {
      expect(yield* get("/dies-after-reply")).toMatchObject({ status: 200, text: "done" })
      expect(errorsOf("/dies-after-reply")).toHaveLength(1)
      // The connection is still good for the next request.
      expect(yield* get("/now")).toMatchObject({ status: 200, text: "done" })
    })
  )

  it.effect("a defect while the reply is written: logged, the reply cut", () =>
    Effect.gen(function* () {
      expect((yield* get("/dies-mid-reply")).text).toBeUndefined()
      expect(errorsOf("/dies-mid-reply")).toHaveLength(1)
    })
  )
})
