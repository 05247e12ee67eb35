// Real receivers for the sender's tests: node:http (or node:https) servers on 127.0.0.1 only, closed with the
// test's scope, that record every request they get.
import type { IncomingHttpHeaders, IncomingMessage, RequestListener, ServerResponse } from "node:http"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo, Socket } from "node:net"
import * as Effect from "effect/Effect"

export interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly socket: Socket
}

export interface Receiver {
  readonly url: string
  readonly port: number
  readonly received: Array<Received>
  /** Every connection the receiver accepted, and whether each is closed. */
  readonly sockets: Array<Socket>
}

export type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void

/** A receiver answering with `handler` once each request's body is read; `tls` makes it https. */
export const receiver = (handler: Handler, tls?: { readonly key: string; readonly cert: string }) =>
  Effect.acquireRelease(
    Effect.async<{ server: http.Server; receiver: Receiver }>((resume) => {
      const received: Array<Received> = []
      const sockets: Array<Socket> = []
      const listener: RequestListener = (request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8")
          received.push({ headers: request.headers, body, socket: request.socket })
          handler(request, response, body)
        })
      }
      const server = tls === undefined ? http.createServer(listener) : https.createServer(tls, listener)
      server.on(tls === undefined ? "connection" : "secureConnection", (socket: Socket) => sockets.push(socket))
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        const url = `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}/hook`
        resume(Effect.succeed({ server, receiver: { url, port, received, sockets } }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ receiver }) => receiver))

/** A port nothing listens on: one a server held a moment ago. */
export const closedPort = Effect.async<number>((resume) => {
  const server = http.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})
