// One kind of handler run in this process on fake requests (`bench/route.mjs`): filedata's hot route
// (`apps/server/src/fast/FileDataRoute.ts`, with the real SQLite reader and memory limiter, as `pnpm start` wires them at
// `LOG_LEVEL=warn`) or the baseline's request listener, over the small profile's database. Each reply is Node's own
// `ServerResponse`, so its header block and body are assembled and handed to the socket as a server's are, on a
// socket that counts what it is handed instead of sending it. No HTTP parser, no system call (nor the UTF-8 encoding
// of text a TCP socket does on its way), no load generator: what is left is each one's own work for a request,
// measured by this process's CPU time. filedata's side is bundled from
// the TypeScript sources by `bench/route.mjs`.
// Usage (through bench/route.mjs): node BUNDLE filedata|baseline DB REQUESTS RUNS

import { EventEmitter } from "node:events"
import { ServerResponse } from "node:http"
import { Writable } from "node:stream"

// The connection a reply is written on: Node's response writes to it as to a TCP socket (corked, strings kept as
// strings), and it takes every write at once.
class Sink extends Writable {
  remoteAddress = "127.0.0.1"
  written = 0
  constructor() {
    super({ decodeStrings: false })
  }
  _write(chunk, _encoding, done) {
    this.written += chunk.length
    done()
  }
  _writev(chunks, done) {
    for (const { chunk } of chunks) this.written += chunk.length
    done()
  }
  setTimeout() {
    return this
  }
}

// The small profile's bodies, each file with its owner's key, as `bench/lib/load.mjs` sends them.
const bodies = Array.from({ length: 1000 }, (_, f) =>
  Buffer.from(JSON.stringify({ fileId: `file-${f}`, apiKey: `bench-key-${f % 100}` }))
)

// Runs `listener` for `requests` requests, letting the turns of the event loop their replies queue run every so
// often, as a server's do; throws unless every reply was a 200 with a body.
const drive = async (listener, requests, offset) => {
  for (let i = 0; i < requests; i++) {
    const body = bodies[(offset + i) % bodies.length]
    const socket = new Sink()
    const request = new EventEmitter()
    request.method = "POST"
    request.url = "/api/v1/file-data"
    request.httpVersionMajor = 1
    request.httpVersionMinor = 1
    request.socket = socket
    request.headers = { host: "127.0.0.1", "content-type": "application/json", "content-length": String(body.length) }
    request.resume = () => {}
    const response = new ServerResponse(request)
    response.assignSocket(socket)
    listener(request, response)
    request.emit("data", body)
    request.emit("end")
    if (response.statusCode !== 200 || !response.writableEnded || socket.written < 1000) {
      throw new Error(`request ${i}: status ${response.statusCode}, ${socket.written} bytes`)
    }
    if (i % 64 === 63) await new Promise(setImmediate)
  }
  await new Promise(setImmediate)
}

/** Runs `listener` `runs` times over `requests` requests after a warm-up; prints µs of CPU a request per run. */
export const measure = async (listener, requests, runs) => {
  await drive(listener, Math.min(requests, 50_000), 0)
  const figures = []
  for (let run = 0; run < runs; run++) {
    const before = process.cpuUsage()
    await drive(listener, requests, run)
    const used = process.cpuUsage(before)
    figures.push((used.user + used.system) / requests)
  }
  console.log(JSON.stringify(figures))
}
