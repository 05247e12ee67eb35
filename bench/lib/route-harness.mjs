// One kind of handler run in this process on fake requests and responses (`bench/route.mjs`): filedata's hot
// route (`apps/server/src/FileDataRoute.ts`, with the real SQLite reader and memory limiter, as `pnpm start` wires
// them at `LOG_LEVEL=warn`) or the baseline's request listener, over the small profile's database. No socket, no
// HTTP parser, no load generator: what is left is each one's own work for a request, measured by this process's
// CPU time. filedata's side is bundled from the TypeScript sources by `bench/route.mjs`.
// Usage (through bench/route.mjs): node BUNDLE filedata|baseline DB REQUESTS RUNS

import { EventEmitter } from "node:events"

// What both handlers use of a Node response; writes are counted, not sent.
class FakeResponse {
  statusCode = 200
  headersSent = false
  destroyed = false
  writableEnded = false
  written = 0
  constructor(req) {
    this.req = req
  }
  writeHead(status) {
    this.statusCode = status
    this.headersSent = true
    return this
  }
  write(piece) {
    this.written += piece.length
    return true
  }
  end(piece) {
    if (piece !== undefined) this.written += piece.length
    this.writableEnded = true
    return this
  }
  setHeader() {}
  on() {
    return this
  }
  once() {
    return this
  }
  off() {
    return this
  }
  setTimeout() {
    return this
  }
  destroy() {
    this.destroyed = true
  }
}

const socket = { remoteAddress: "127.0.0.1" }

// The small profile's bodies, each file with its owner's key, as `bench/lib/load.mjs` sends them.
const bodies = Array.from({ length: 1000 }, (_, f) =>
  Buffer.from(JSON.stringify({ fileId: `file-${f}`, apiKey: `bench-key-${f % 100}` }))
)

// Runs `listener` for `requests` requests; throws unless every reply was a 200 with a body.
const drive = (listener, requests, offset) => {
  for (let i = 0; i < requests; i++) {
    const body = bodies[(offset + i) % bodies.length]
    const request = new EventEmitter()
    request.method = "POST"
    request.url = "/api/v1/file-data"
    request.socket = socket
    request.headers = { host: "127.0.0.1", "content-type": "application/json", "content-length": String(body.length) }
    request.resume = () => {}
    const response = new FakeResponse(request)
    listener(request, response)
    request.emit("data", body)
    request.emit("end")
    if (response.statusCode !== 200 || !response.writableEnded || response.written === 0) {
      throw new Error(`request ${i}: status ${response.statusCode}, ${response.written} bytes`)
    }
  }
}

/** Runs `listener` `runs` times over `requests` requests after a warm-up; prints µs of CPU a request per run. */
export const measure = (listener, requests, runs) => {
  drive(listener, Math.min(requests, 50_000), 0)
  const figures = []
  for (let run = 0; run < runs; run++) {
    const before = process.cpuUsage()
    drive(listener, requests, run)
    const used = process.cpuUsage(before)
    figures.push((used.user + used.system) / requests)
  }
  console.log(JSON.stringify(figures))
}
