// What an operator sees of the built server as a real process: Prometheus metrics scraped from a listener of
// their own (METRICS_PORT), spans received by a local OTLP/HTTP receiver (OTEL_EXPORTER_OTLP_ENDPOINT), and the
// request log line with its client address, file, user and problem code; never an API key anywhere.

import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { connect, createServer as createNetServer } from "node:net"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Conditions, Processes, SqliteFiles } from "@filedata/testing"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const { finish, killLeftovers, startBuilt } = Processes

const ALICE_KEY = "telemetry-alice-key-5e0c"
const BOB_KEY = "telemetry-bob-key-5e0c"
const WRONG_KEY = "telemetry-wrong-key-5e0c"
const KEYS = [ALICE_KEY, BOB_KEY, WRONG_KEY]

const fixture = {
  users: [
    { id: "alice", apiKeys: [ALICE_KEY] },
    { id: "bob", apiKeys: [BOB_KEY] }
  ],
  files: [
    {
      id: "contact",
      userId: "alice",
      name: "Contact",
      creationDate: "2024-01-01T00:00:00.000Z",
      submissions: [{ createdDate: "2024-01-02T09:30:00.000Z", content: { email: "a@example.com" } }]
    }
  ]
}

/** A database holding the fixture, and the environment the server reads it with. */
const database = () => TestServer.importedDatabase("telemetry", fixture)

type Running = Processes.Served
const { serve } = Processes

/** Stops the server with SIGTERM (which writes the last log lines and flushes the last spans). */
const stop = (server: Running) => Processes.stop(server, KEYS)

// Metrics are counted process-wide, so the tests that read them run the built server; the others run it in
// this process (a fresh registry is what only a fresh process has).
const serveHere = (env: Record<string, string>) => InProcess.serve(env)
const stopHere = (server: InProcess.Served) => InProcess.stop(server, KEYS)

const post = (base: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/v1/file-data`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body
  }).then(async (reply) => ({ status: reply.status, text: await reply.text() }))

const read = (base: string, fileId: string, apiKey: string, headers: Record<string, string> = {}) =>
  post(base, JSON.stringify({ fileId, apiKey }), headers)

interface LogLine {
  readonly message: string
  readonly logLevel: string
  readonly annotations: Record<string, unknown>
}

const logLines = (stdout: string): ReadonlyArray<LogLine> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as LogLine)

const requestEntry = (stdout: string, requestId: string) =>
  logLines(stdout).find((line) => line.message === "request" && line.annotations.requestId === requestId)

const requestLine = (stdout: string, requestId: string) => requestEntry(stdout, requestId)?.annotations

afterEach(killLeftovers)

// Prometheus text as the exporter writes it: `name{label="value",...} number` lines between `# HELP` and
// `# TYPE` comments.
interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const samples = (text: string): ReadonlyArray<Sample> =>
  text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
      if (match === null) throw new Error(`not a sample: ${line}`)
      const labels: Record<string, string> = {}
      for (const [, name, value] of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        labels[name as string] = JSON.parse(`"${value}"`)
      }
      return { name: match[1] as string, labels, value: Number(match[3]) }
    })

/** The value of the one sample named `name` whose labels include `labels`; undefined when there is none. */
const sampleValue = (all: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) => {
  const found = all.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)
  )
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}

const metricsUrl = (stdout: string) => /metrics on (http:\/\/\S+)/.exec(stdout)?.[1]

// The text format's media type, version included, as Prometheus expects it.
const prometheusTextType = "text/plain; version=0.0.4; charset=utf-8"

// Prometheus's own linter (Debian package `prometheus`; .ci/run installs it where apt-get can). Without it the
// check is skipped, saying why, so a machine without it still runs the rest.
const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" })
const promtoolMissing = promtool.error === undefined && promtool.status === 0 ? undefined : "no promtool on PATH"
if (promtoolMissing !== undefined)
  console.warn(`promtool check metrics SKIPPED: ${promtoolMissing} (apt-get install prometheus)`)

describe("metrics (built server, real process)", () => {
  it("serves Prometheus text on METRICS_PORT: requests by route, method and status, problems, refusals, storage failures, bytes, replies in flight, the process; nothing on the public port; no key", async () => {
    const { env, filename } = await database()
    const running = await serve({ ...env, METRICS_PORT: "0", RATE_LIMIT_MAX: "4", LOG_LEVEL: "warn" })
    const { base } = running
    // The metrics listener's own line, written whatever LOG_LEVEL says.
    const scrapeUrl = await Conditions.until(() => metricsUrl(running.stdout()), {
      what: "the metrics line",
      limitMillis: 5_000
    })
    expect(new URL(scrapeUrl).hostname).toBe("127.0.0.1")
    expect(new URL(scrapeUrl).port).not.toBe(new URL(base).port)

    expect((await read(base, "contact", ALICE_KEY)).status).toBe(200)
    expect((await read(base, "contact", ALICE_KEY)).status).toBe(200)
    expect((await read(base, "contact", WRONG_KEY)).status).toBe(403)
    expect((await read(base, "contact", BOB_KEY)).status).toBe(403)
    expect((await post(base, `{"fileId":"contact","apiKey":"${WRONG_KEY}"`)).status).toBe(422)
    // Alice's quota of 4 is used up by the two reads above and these two; the next is refused.
    expect((await read(base, "missing", ALICE_KEY)).status).toBe(404)
    expect((await read(base, "contact", ALICE_KEY)).status).toBe(200)
    expect(JSON.parse((await read(base, "contact", ALICE_KEY)).text)).toMatchObject({ code: "rate_limited" })
    expect((await fetch(`${base}/health`)).status).toBe(200)
    // Never on the public port: there it is just an unknown path.
    const publicMetrics = await fetch(`${base}/metrics`)
    expect(publicMetrics.status).toBe(404)
    expect(await publicMetrics.json()).toMatchObject({ code: "not_found" })
    expect((await fetch(`${base}/api/v1/file-data`)).status).toBe(405)

    const scrape = async () => {
      const reply = await fetch(scrapeUrl)
      expect(reply.status).toBe(200)
      expect(reply.headers.get("content-type")).toBe(prometheusTextType)
      return reply.text()
    }
    const route = "/api/v1/file-data"
    const duration = "filedata_http_request_duration_seconds_count"
    const text = await Conditions.until(
      async () => {
        const text = await scrape()
        return sampleValue(samples(text), duration, { route: "/health", method: "GET" }) === 1 ? text : undefined
      },
      { what: "the /health request counted", limitMillis: 5_000 }
    )
    const all = samples(text)
    expect(sampleValue(all, duration, { route, method: "POST", status: "200" })).toBe(3)
    expect(sampleValue(all, duration, { route, method: "POST", status: "403" })).toBe(2)
    expect(sampleValue(all, duration, { route, method: "POST", status: "404" })).toBe(1)
    expect(sampleValue(all, duration, { route, method: "POST", status: "422" })).toBe(2)
    expect(sampleValue(all, duration, { route, method: "GET", status: "405" })).toBe(1)
    expect(sampleValue(all, duration, { route: "/health", method: "GET", status: "200" })).toBe(1)
    expect(sampleValue(all, duration, { route: "unknown", method: "GET", status: "404" })).toBe(1)
    expect(
      sampleValue(all, "filedata_http_request_duration_seconds_bucket", {
        route,
        method: "POST",
        status: "200",
        le: "+Inf"
      })
    ).toBe(3)
    expect(sampleValue(all, "filedata_http_request_duration_seconds_sum", { route, status: "200" })).toBeGreaterThan(0)

    expect(sampleValue(all, "filedata_problems_total", { code: "access_denied" })).toBe(2)
    expect(sampleValue(all, "filedata_problems_total", { code: "validation_failed" })).toBe(1)
    expect(sampleValue(all, "filedata_problems_total", { code: "file_not_found" })).toBe(1)
    expect(sampleValue(all, "filedata_problems_total", { code: "rate_limited" })).toBe(1)
    expect(sampleValue(all, "filedata_problems_total", { code: "not_found" })).toBe(1)
    expect(sampleValue(all, "filedata_problems_total", { code: "method_not_allowed" })).toBe(1)
    expect(sampleValue(all, "filedata_rate_limit_refusals_total", { scope: "apiKey" })).toBe(1)
    expect(sampleValue(all, "filedata_rate_limit_refusals_total", { scope: "clientAddress" })).toBe(0)
    expect(sampleValue(all, "filedata_replies_in_flight")).toBe(0)
    const sent = sampleValue(all, "filedata_replies_sent_bytes_total", { route })
    expect(sent).toBeGreaterThan(3 * 100)

    // The process, read at the scrape.
    for (const name of [
      "process_cpu_seconds_total",
      "process_resident_memory_bytes",
      "process_start_time_seconds",
      "nodejs_heap_size_used_bytes",
      "nodejs_eventloop_lag_p99_seconds",
      "nodejs_active_resources"
    ]) {
      expect(sampleValue(all, name), name).toBeGreaterThan(0)
    }
    for (const key of KEYS) expect(text).not.toContain(key)

    // Storage failures, counted by operation: the database is gone.
    SqliteFiles.remove(filename)
    expect(JSON.parse((await read(base, "contact", BOB_KEY)).text)).toMatchObject({ code: "storage_unavailable" })
    const after = samples(await scrape())
    expect(sampleValue(after, "filedata_storage_failures_total", { operation: "findAccess" })).toBe(1)
    expect(sampleValue(after, "filedata_problems_total", { code: "storage_unavailable" })).toBe(1)
    expect(sampleValue(after, "filedata_http_request_duration_seconds_count", { route, status: "503" })).toBe(1)
    // Anything but /metrics on the metrics listener is not found.
    expect((await fetch(new URL("/health", scrapeUrl))).status).toBe(404)
    await stop(running)
  }, 60_000)

  it("exports every documented series from a fresh start, at 0 for each label value known in advance, with the units of its name", async () => {
    const { env } = await database()
    const running = await serve({ ...env, METRICS_PORT: "0", LOG_LEVEL: "warn" })
    const scrapeUrl = await Conditions.until(() => metricsUrl(running.stdout()), {
      what: "the metrics line",
      limitMillis: 5_000
    })
    const text = await (await fetch(scrapeUrl)).text()
    await stop(running)
    const all = samples(text)
    // docs/operations.md's table of the metrics: each row, its labels' values when it lists them.
    const operations = readFileSync(fileURLToPath(new URL("../../../docs/operations.md", import.meta.url)), "utf8")
    const rows = [...operations.matchAll(/^\| (`[^|]+`) \| (\w+) \|([^|]*)\|/gm)]
    expect(rows.length).toBeGreaterThan(12)
    for (const [, names, type, labels] of rows) {
      // `a`, `b` lists several series; `x_{min,max}_y` stands for `x_min_y` and `x_max_y`.
      const listed = [...(names ?? "").matchAll(/`(\w+)(?:\{([\w,]+)\}(\w+))?`/g)].flatMap(([, head, parts, tail]) =>
        parts === undefined ? [head ?? ""] : parts.split(",").map((part) => `${head}${part}${tail}`)
      )
      for (const name of listed) {
        const series = all.filter((sample) => sample.name === name || sample.name.startsWith(`${name}_`))
        expect(series.length, `${name} (${type})`).toBeGreaterThan(0)
        expect(text, name).toMatch(new RegExp(`^# HELP ${name} \\S`, "m"))
        const unit = /_(seconds|bytes)(_total)?$/.exec(name)?.[1]
        if (unit !== undefined) expect(text, name).toMatch(new RegExp(`^# UNIT ${name} ${unit}$`, "m"))
        // The service's own series count what happened since the start: nothing yet.
        if (name.startsWith("filedata_")) for (const sample of series) expect(sample.value, name).toBe(0)
      }
      const label = /^`(\w+)` \((.*)\)/.exec((labels ?? "").trim())
      if (label !== null) {
        const values = [...(label[2] ?? "").matchAll(/`(\w+)`/g)].map((match) => match[1])
        const series = all.filter((sample) => sample.name === listed[0])
        expect(series.map((sample) => sample.labels[label[1] ?? ""]).sort(), listed[0]).toEqual(values.sort())
      }
    }
    // Each route's series from the start, the duration's for its methods' 200.
    const route = "/api/v1/file-data"
    expect(sampleValue(all, "filedata_replies_sent_bytes_total", { route })).toBe(0)
    expect(sampleValue(all, "filedata_replies_sent_bytes_total", { route: "unknown" })).toBe(0)
    for (const [path, method] of [
      [route, "POST"],
      ["/api/v1/file-data/submissions", "POST"],
      ["/health", "GET"]
    ]) {
      const labels = { route: path ?? "", method: method ?? "", status: "200" }
      expect(sampleValue(all, "filedata_http_request_duration_seconds_count", labels), path).toBe(0)
      expect(sampleValue(all, "filedata_http_request_duration_seconds_bucket", { ...labels, le: "+Inf" })).toBe(0)
    }
    // `# UNIT` is the unit the name ends in, and no other; Effect's undescribed fiber metrics are not exported.
    const units = [...text.matchAll(/^# UNIT (\S+) (\S+)$/gm)]
    expect(units.length).toBeGreaterThan(0)
    for (const [, name, unit] of units) expect(name, unit).toMatch(new RegExp(`_${unit}(_total)?$`))
    expect(text).toMatch(/^# UNIT process_cpu_seconds_total seconds$/m)
    expect(text).toMatch(/^# UNIT process_resident_memory_bytes bytes$/m)
    expect(text).not.toContain("effect_fiber_")
    expect(text).not.toContain("description missing")
  }, 30_000)

  it.skipIf(promtoolMissing !== undefined)(
    "passes `promtool check metrics` with no warning after requests of every kind",
    async () => {
      const { env } = await database()
      const running = await serve({ ...env, METRICS_PORT: "0", RATE_LIMIT_MAX: "2", LOG_LEVEL: "warn" })
      const { base } = running
      const scrapeUrl = await Conditions.until(() => metricsUrl(running.stdout()), {
        what: "the metrics line",
        limitMillis: 5_000
      })
      // Replies of each family, so that every labelled series and histogram is in the scrape.
      expect((await read(base, "contact", ALICE_KEY)).status).toBe(200)
      expect((await read(base, "contact", WRONG_KEY)).status).toBe(403)
      expect((await read(base, "missing", ALICE_KEY)).status).toBe(404)
      expect((await read(base, "contact", ALICE_KEY)).status).toBe(422)
      expect((await post(base, "{")).status).toBe(422)
      expect((await fetch(`${base}/health`)).status).toBe(200)
      expect((await fetch(`${base}/nowhere`)).status).toBe(404)
      const reply = await fetch(scrapeUrl)
      const text = await reply.text()
      await stop(running)
      expect(reply.headers.get("content-type")).toBe(prometheusTextType)
      expect(text).toContain("filedata_problems_total{")
      const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" })
      expect(`${check.stdout}${check.stderr}`.trim()).toBe("")
      expect(check.status).toBe(0)
    },
    30_000
  )

  it("is off without METRICS_PORT: no metrics line, no listener", async () => {
    const { env } = await database()
    const running = await serve({ ...env, LOG_LEVEL: "info" })
    const exit = await stop(running)
    expect(exit.stdout).not.toContain("metrics on")
  }, 30_000)
})

/** A connection from `localAddress` to `port`: once connected, and all it received once the server closed it. */
const connection = (port: number, localAddress = "127.0.0.1") => {
  const socket = connect({ port, host: "127.0.0.1", localAddress })
  let received = ""
  socket.setEncoding("latin1")
  socket.on("data", (chunk: string) => (received += chunk))
  // A connection the server closes while the request is still being written ends with EPIPE or ECONNRESET.
  socket.on("error", () => {})
  return {
    socket,
    connected: new Promise<void>((resolve) => socket.once("connect", () => resolve())),
    closed: new Promise<string>((resolve) => socket.once("close", () => resolve(received)))
  }
}

/**
 * Sends `request` on a connection of its own from 127.0.0.2, an address the limit on 127.0.0.1 does not concern
 * (the server may see a connection closed after its client does); all it received once the server closed it.
 */
const exchange = (port: number, request: string) => {
  const { socket, closed } = connection(port, "127.0.0.2")
  socket.write(request)
  return closed
}

describe("what the server answers before any route (built server, real process)", () => {
  it("counts the protocol errors by status and code, and the connections closed before a request; logs each reply with its code and address", async () => {
    const { env } = await database()
    const running = await serve({
      ...env,
      METRICS_PORT: "0",
      LOG_LEVEL: "info",
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: "2",
      HTTP_FIRST_REQUEST_TIMEOUT_MS: "2000"
    })
    const port = Number(new URL(running.base).port)
    const scrapeUrl = await Conditions.until(() => metricsUrl(running.stdout()), {
      what: "the metrics line",
      limitMillis: 5_000
    })
    const scrape = async () => samples(await (await fetch(scrapeUrl)).text())

    // Every code of the client's list, and both reasons, from the start.
    const before = await scrape()
    for (const code of ["request_header_fields_too_large", "expectation_failed", "internal_error"]) {
      expect(sampleValue(before, "filedata_problems_total", { code }), code).toBe(0)
    }
    for (const reason of ["address_limit", "first_request_timeout"]) {
      expect(sampleValue(before, "filedata_connections_closed_total", { reason }), reason).toBe(0)
    }

    // Two connections hold the address's two; a third is closed at once, without a byte. Then one of the two
    // begins a request head and does not finish it (408), the other never sends anything (closed).
    const silent = connection(port)
    const partial = connection(port)
    await Promise.all([silent.connected, partial.connected])
    expect(await connection(port).closed).toBe("")
    partial.socket.write("GET /health HTTP/1.1\r\nHost: filedata.test\r\n")
    expect(await silent.closed).toBe("")
    expect(await partial.closed).toMatch(/^HTTP\/1\.1 408 /)

    expect(await exchange(port, "NONSENSE\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 /)
    // Over the 32 KiB Node's parser reads, so that no route sees it (one over 16 KiB only is refused as a request).
    expect(
      await exchange(port, `GET /health HTTP/1.1\r\nHost: filedata.test\r\nX-Filler: ${"a".repeat(40_000)}\r\n\r\n`)
    ).toMatch(/^HTTP\/1\.1 431 /)
    expect(
      await exchange(
        port,
        "GET /health HTTP/1.1\r\nHost: filedata.test\r\nExpect: tea\r\nX-Request-Id: edge-expect\r\n\r\n"
      )
    ).toMatch(/^HTTP\/1\.1 417 /)
    expect(await exchange(port, "GET /health HTTP/1.1\r\nX-Request-Id: edge-no-host\r\n\r\n")).toMatch(
      /^HTTP\/1\.1 400 /
    )

    const duration = "filedata_http_request_duration_seconds_count"
    const all = await Conditions.until(
      async () => {
        const all = await scrape()
        return sampleValue(all, duration, { route: "/health", status: "400" }) === 1 ? all : undefined
      },
      { what: "the request without Host counted", limitMillis: 5_000 }
    )
    // The requests no route saw, under the route and method `unknown`; the others by their path and method.
    const unrouted = { route: "unknown", method: "unknown" }
    expect(sampleValue(all, duration, { ...unrouted, status: "408" })).toBe(1)
    expect(sampleValue(all, duration, { ...unrouted, status: "400" })).toBe(1)
    expect(sampleValue(all, duration, { ...unrouted, status: "431" })).toBe(1)
    expect(sampleValue(all, duration, { route: "/health", method: "GET", status: "417" })).toBe(1)
    expect(sampleValue(all, duration, { route: "/health", method: "GET", status: "400" })).toBe(1)
    expect(sampleValue(all, "filedata_problems_total", { code: "request_timeout" })).toBe(1)
    expect(sampleValue(all, "filedata_problems_total", { code: "bad_request" })).toBe(2)
    expect(sampleValue(all, "filedata_problems_total", { code: "request_header_fields_too_large" })).toBe(1)
    expect(sampleValue(all, "filedata_problems_total", { code: "expectation_failed" })).toBe(1)
    expect(sampleValue(all, "filedata_connections_closed_total", { reason: "address_limit" })).toBe(1)
    expect(sampleValue(all, "filedata_connections_closed_total", { reason: "first_request_timeout" })).toBe(2)

    const { stdout } = await stop(running)
    const address = { clientAddress: "127.0.0.2" }
    expect(requestLine(stdout, "edge-expect")).toMatchObject({
      ...address,
      method: "GET",
      path: "/health",
      status: 417,
      code: "expectation_failed"
    })
    expect(requestLine(stdout, "edge-no-host")).toMatchObject({ ...address, status: 400, code: "bad_request" })
    const unread = logLines(stdout)
      .filter((line) => line.message === "request" && line.annotations.method === "-")
      .map(({ annotations }) => annotations)
    expect(unread).toEqual([
      expect.objectContaining({ clientAddress: "127.0.0.1", path: "-", status: 408, code: "request_timeout" }),
      expect.objectContaining({ ...address, path: "-", status: 400, code: "bad_request" }),
      expect.objectContaining({ ...address, path: "-", status: 431, code: "request_header_fields_too_large" })
    ])
  }, 60_000)
})

describe("the start refuses metrics it cannot serve", () => {
  const refused = async (env: Record<string, string>) => {
    const { env: base } = await database()
    const exit = await finish(startBuilt("server", [], { ...base, ...env }))
    expect(exit.code).toBe(1)
    expect(exit.stdout).not.toContain("listening on")
    const lines = exit.stderr.split("\n").filter((line) => line !== "")
    expect(lines, exit.stderr).toHaveLength(1)
    return lines[0]
  }

  it("on the public port", async () => {
    expect(await refused({ PORT: "43219", METRICS_PORT: "43219" })).toBe(
      'Invalid configuration: METRICS_PORT: Expected a port other than PORT\'s but received "43219"'
    )
  }, 30_000)

  it("on a port already taken", async () => {
    const taken = createNetServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const address = taken.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    try {
      expect(await refused({ METRICS_PORT: String(port) })).toBe(
        `Cannot start: cannot listen on METRICS_HOST=127.0.0.1 METRICS_PORT=${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`
      )
    } finally {
      taken.close()
    }
  }, 30_000)
})

interface Received {
  readonly path: string
  readonly contentType: string
  readonly body: Buffer
}

/** A local OTLP/HTTP receiver: keeps every request it gets and answers each with success. */
const receiver = async () => {
  const received: Array<Received> = []
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const headers: IncomingHttpHeaders = request.headers
      received.push({
        path: request.url ?? "",
        contentType: headers["content-type"] ?? "",
        body: Buffer.concat(chunks)
      })
      response.writeHead(200, { "content-type": headers["content-type"] ?? "application/json" })
      response.end(headers["content-type"] === "application/json" ? "{}" : "")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return { endpoint: `http://127.0.0.1:${port}`, received, close: () => server.close() }
}

interface Span {
  readonly startTimeUnixNano: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: Record<string, unknown>
}

interface OtlpValue {
  readonly stringValue?: string
  readonly intValue?: number | string
  readonly boolValue?: boolean
}

const attributesOf = (list: ReadonlyArray<{ key: string; value: OtlpValue }>) =>
  Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue === undefined ? value.boolValue : Number(value.intValue))
    ])
  )

/** Every span of the OTLP/JSON requests received, with the resources they came with. */
const spansOf = (received: ReadonlyArray<Received>) => {
  const spans: Array<Span> = []
  const resources: Array<Record<string, unknown>> = []
  for (const { body } of received) {
    const document = JSON.parse(body.toString("utf8"))
    for (const resourceSpans of document.resourceSpans) {
      resources.push(attributesOf(resourceSpans.resource.attributes))
      for (const scopeSpans of resourceSpans.scopeSpans) {
        for (const span of scopeSpans.spans) spans.push({ ...span, attributes: attributesOf(span.attributes) })
      }
    }
  }
  return { spans, resources }
}

const SPAN_KIND_SERVER = 2

describe("traces (local OTLP/HTTP receiver)", () => {
  it("exports a server span per request with the ports' calls as its children, over OTLP/HTTP JSON; never the key", async () => {
    const otlp = await receiver()
    const { env } = await database()
    const running = await serveHere({
      ...env,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "filedata-under-test",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,team=forms%20and%20files",
      LOG_LEVEL: "info"
    })
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const callerSpan = "00f067aa0ba902b7"
    const headers = { "x-request-id": "traced-read", traceparent: `00-${traceId}-${callerSpan}-01` }
    expect((await read(running.base, "contact", ALICE_KEY, headers)).status).toBe(200)
    expect((await read(running.base, "contact", WRONG_KEY, { "x-request-id": "traced-denied" })).status).toBe(403)
    expect((await fetch(`${running.base}/health`, { headers: { "x-request-id": "traced-health" } })).status).toBe(200)
    const { stdout } = await stopHere(running)
    otlp.close()
    // Traced, a request runs on Effect's runtime (the immediate path would open no span): its line is a fiber's.
    expect(requestEntry(stdout, "traced-read")).toMatchObject({ fiberId: expect.stringMatching(/^#\d+$/) })

    expect(otlp.received.length).toBeGreaterThan(0)
    for (const { path, contentType } of otlp.received) {
      expect(path).toBe("/v1/traces")
      expect(contentType).toBe("application/json")
    }
    const everything = otlp.received.map(({ body }) => body.toString("utf8")).join("\n")
    for (const key of KEYS) expect(everything).not.toContain(key)
    const { resources, spans } = spansOf(otlp.received)
    expect(resources[0]).toMatchObject({
      "service.name": "filedata-under-test",
      "deployment.environment.name": "test",
      team: "forms and files"
    })

    const server = (requestId: string) => {
      const found = spans.filter((span) => span.attributes["filedata.request_id"] === requestId)
      expect(found, requestId).toHaveLength(1)
      return found[0] as Span
    }
    const children = (parent: Span) =>
      spans
        .filter((span) => span.parentSpanId === parent.spanId)
        .sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)))
    const descendants = (parent: Span): ReadonlyArray<Span> =>
      children(parent).flatMap((child) => [child, ...descendants(child)])

    const traced = server("traced-read")
    expect(traced).toMatchObject({
      name: "http.server POST",
      kind: SPAN_KIND_SERVER,
      traceId,
      parentSpanId: callerSpan
    })
    expect(traced.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/api/v1/file-data",
      "http.response.status_code": 200
    })
    expect(children(traced).map((span) => span.name)).toEqual([
      "RateLimiter.consume",
      "RateLimiter.consume",
      "FileRepository.findAccess",
      "FileRepository.readSubmissions"
    ])
    expect(children(traced).map((span) => span.attributes["filedata.rate_limit.scope"])).toEqual([
      "clientAddress",
      "apiKey",
      undefined,
      undefined
    ])
    expect(children(traced).find((span) => span.name === "FileRepository.findAccess")?.attributes).toMatchObject({
      "filedata.file_id": "contact"
    })

    const denied = server("traced-denied")
    expect(denied.attributes["http.response.status_code"]).toBe(403)
    expect(denied.parentSpanId ?? "").toBe("")
    expect(children(denied).map((span) => span.name)).toEqual([
      "RateLimiter.consume",
      "RateLimiter.consume",
      "FileRepository.findAccess"
    ])

    // The platform's own span for every other path, with the request id and route added.
    const health = server("traced-health")
    expect(health).toMatchObject({ name: "http.server GET", kind: SPAN_KIND_SERVER })
    expect(health.attributes).toMatchObject({ "http.route": "/health", "http.response.status_code": 200 })
    expect(descendants(health).map((span) => span.name)).toContain("FileRepository.ping")
  }, 60_000)

  it("sends OTLP/HTTP protobuf by default, to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given", async () => {
    const otlp = await receiver()
    const { env } = await database()
    const running = await serveHere({ ...env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.endpoint}/custom/traces` })
    expect((await read(running.base, "contact", ALICE_KEY, { "x-request-id": "protobuf-read" })).status).toBe(200)
    await stopHere(running)
    otlp.close()
    expect(otlp.received.length).toBeGreaterThan(0)
    for (const { path, contentType } of otlp.received) {
      expect(path).toBe("/custom/traces")
      expect(contentType).toBe("application/x-protobuf")
    }
    // Strings are written as they are in protobuf: the span names and the request id are there, no key.
    const body = Buffer.concat(otlp.received.map(({ body }) => body))
    for (const text of ["http.server POST", "FileRepository.findAccess", "protobuf-read"]) {
      expect(body.includes(text), text).toBe(true)
    }
    for (const key of KEYS) expect(body.includes(key), key).toBe(false)
  }, 60_000)
})

describe("the request log line", () => {
  it("names the client address, the file, the key's user and the problem code; never a key", async () => {
    const { env } = await database()
    const running = await serveHere({ ...env, LOG_LEVEL: "info", TRUST_PROXY: "true" })
    const { base } = running
    const calls: ReadonlyArray<readonly [string, () => Promise<{ status: number }>]> = [
      ["log-ok", () => read(base, "contact", ALICE_KEY, { "x-request-id": "log-ok" })],
      ["log-wrong-key", () => read(base, "contact", WRONG_KEY, { "x-request-id": "log-wrong-key" })],
      ["log-others-file", () => read(base, "contact", BOB_KEY, { "x-request-id": "log-others-file" })],
      ["log-missing", () => read(base, "missing", ALICE_KEY, { "x-request-id": "log-missing" })],
      [
        "log-invalid",
        () =>
          post(base, JSON.stringify({ fileId: "contact", apiKey: ALICE_KEY, extra: 1 }), {
            "x-request-id": "log-invalid"
          })
      ],
      [
        "log-forwarded",
        () =>
          read(base, "contact", ALICE_KEY, {
            "x-request-id": "log-forwarded",
            "x-forwarded-for": "198.51.100.1, 2001:DB8:0:0:1::7"
          })
      ],
      ["log-unknown-path", () => fetch(`${base}/nothing-here`, { headers: { "x-request-id": "log-unknown-path" } })],
      ["log-health", () => fetch(`${base}/health`, { headers: { "x-request-id": "log-health" } })]
    ]
    for (const [, call] of calls) await call()
    const { stdout } = await stopHere(running)

    const hot = { method: "POST", path: "/api/v1/file-data", clientAddress: "127.0.0.1" }
    expect(requestLine(stdout, "log-ok")).toMatchObject({ ...hot, status: 200, fileId: "contact", userId: "alice" })
    // Answered at once, its line written by hand (no fiber); a problem's reply is a fiber's, on the runtime.
    expect(requestEntry(stdout, "log-ok")).toMatchObject({ fiberId: "", spans: {}, logLevel: "INFO" })
    expect(requestEntry(stdout, "log-wrong-key")).toMatchObject({ fiberId: expect.stringMatching(/^#\d+$/) })
    expect(requestLine(stdout, "log-ok")).not.toHaveProperty("code")
    expect(requestLine(stdout, "log-wrong-key")).toMatchObject({
      ...hot,
      status: 403,
      fileId: "contact",
      code: "access_denied"
    })
    expect(requestLine(stdout, "log-wrong-key")).not.toHaveProperty("userId")
    // The user is the key's owner, the one who asked: here not the file's owner.
    expect(requestLine(stdout, "log-others-file")).toMatchObject({
      status: 403,
      fileId: "contact",
      userId: "bob",
      code: "access_denied"
    })
    expect(requestLine(stdout, "log-missing")).toMatchObject({
      status: 404,
      fileId: "missing",
      userId: "alice",
      code: "file_not_found"
    })
    expect(requestLine(stdout, "log-invalid")).toMatchObject({ status: 422, code: "validation_failed" })
    expect(requestLine(stdout, "log-invalid")).not.toHaveProperty("fileId")
    // Behind a trusted proxy: the address it forwarded, whole and canonical.
    expect(requestLine(stdout, "log-forwarded")).toMatchObject({ status: 200, clientAddress: "2001:db8::1:0:0:7" })
    expect(requestLine(stdout, "log-unknown-path")).toMatchObject({
      method: "GET",
      path: "/nothing-here",
      status: 404,
      code: "not_found",
      clientAddress: "127.0.0.1"
    })
    expect(requestLine(stdout, "log-health")).toMatchObject({ method: "GET", path: "/health", status: 200 })
    expect(requestLine(stdout, "log-health")).not.toHaveProperty("code")
    // One line per request, and every line of the stream JSON, the listening line included.
    const lines = logLines(stdout)
    expect(lines.filter((line) => line.message === "request")).toHaveLength(calls.length)
    const listening = lines.find((line) => String(line.message).startsWith("listening on"))
    expect(listening?.message).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)$/)
  }, 60_000)

  it("writes the listening and stop lines as JSON whatever LOG_LEVEL is, none included", async () => {
    const { env } = await database()
    const running = await serve({ ...env, LOG_LEVEL: "none", METRICS_PORT: "0" })
    expect(new URL(running.base).hostname).toBe("127.0.0.1")
    expect((await read(running.base, "contact", ALICE_KEY)).status).toBe(200)
    const { stdout } = await stop(running)
    const lines = logLines(stdout)
    expect(lines.map((line) => [line.logLevel, line.message.replace(/\d+/g, "N")])).toEqual([
      ["INFO", "metrics on http://N.N.N.N:N/metrics (Prometheus text)"],
      ["INFO", "listening on http://N.N.N.N:N (pid N)"],
      ["INFO", "stopping on SIGTERM: N replies in flight, cut after N ms (HTTP_DRAIN_TIMEOUT_MS)"],
      ["INFO", "stopped: N replies finished, N cut, in N ms"]
    ])
  }, 30_000)
})
