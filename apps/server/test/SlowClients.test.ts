// What a slow or stuck client can hold of the real server: nothing for long.

import { connect, type Socket } from "node:net"
import { expect, layer } from "@effect/vitest"
import { Conditions, Fixtures } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as TestServer from "./utils/TestServer.js"

const fixture = Fixtures.aliceContact(["alice-key"])

const http = {
  ...TestServer.httpLimits,
  headersTimeoutMillis: 300,
  requestTimeoutMillis: 600,
  keepAliveTimeoutMillis: 300,
  maxConnections: 3
}

const open = Effect.flatMap(TestServer.url("/"), (href) =>
  Effect.async<Socket>((resume) => {
    const socket = connect(Number(new URL(href).port), "127.0.0.1", () => resume(Effect.succeed(socket)))
  })
)

/** Milliseconds until the server closes the socket, and what it sent before. */
const closedBy = (socket: Socket, limitMillis: number) =>
  Effect.async<{ readonly afterMillis: number; readonly received: string }>((resume) => {
    const started = performance.now()
    let received = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk) => (received += chunk))
    socket.on("error", () => {})
    const giveUp = setTimeout(() => {
      socket.destroy()
      resume(Effect.succeed({ afterMillis: Number.POSITIVE_INFINITY, received }))
    }, limitMillis)
    socket.on("close", () => {
      clearTimeout(giveUp)
      resume(Effect.succeed({ afterMillis: performance.now() - started, received }))
    })
  })

const request = JSON.stringify({ fileId: "contact", apiKey: "alice-key" })

layer(TestServer.layer({ fixture, http }), { excludeTestServices: true })("slow clients", (it) => {
  it.effect("headers that never finish: the connection is closed after the headers timeout", () =>
    Effect.gen(function* () {
      const socket = yield* open
      socket.write("POST /api/v1/file-data HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
      const { afterMillis, received } = yield* closedBy(socket, 5_000)
      expect(afterMillis).toBeLessThan(2_000)
      if (received !== "") expect(received).toMatch(/^HTTP\/1\.1 408/)
    })
  )

  it.effect("a body that stops halfway: the connection is closed after the request timeout", () =>
    Effect.gen(function* () {
      const socket = yield* open
      socket.write(
        `POST /api/v1/file-data HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${request.length}\r\n\r\n${request.slice(0, 10)}`
      )
      const { afterMillis } = yield* closedBy(socket, 5_000)
      expect(afterMillis).toBeLessThan(2_500)
    })
  )

  it.effect("an idle keep-alive connection is closed after the keep-alive timeout", () =>
    Effect.gen(function* () {
      const socket = yield* open
      socket.write(
        `POST /api/v1/file-data HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${request.length}\r\n\r\n${request}`
      )
      const { afterMillis, received } = yield* closedBy(socket, 5_000)
      expect(received).toMatch(/^HTTP\/1\.1 200/)
      expect(afterMillis).toBeLessThan(2_000)
    })
  )

  it.effect("connections past the cap are refused at once; the server serves again when they go", () =>
    Effect.gen(function* () {
      const held = [yield* open, yield* open, yield* open]
      const extra = yield* open
      const { afterMillis } = yield* closedBy(extra, 2_000)
      expect(afterMillis).toBeLessThan(250)
      for (const socket of held) socket.destroy()
      // Served again once the server has seen them close; until then a request may still be refused.
      const reply = yield* Conditions.eventually(
        Effect.flatMap(Effect.exit(TestServer.postJson(JSON.parse(request))), (exit) =>
          Exit.isSuccess(exit) && exit.value.status === 200 ? Effect.succeed(exit.value) : Effect.fail(exit)
        ),
        { limitMillis: 2_000 }
      )
      expect(reply.status).toBe(200)
    })
  )
})
