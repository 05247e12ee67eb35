// `pnpm soak`: a bounded mixed load against the real server (SQLite in a temporary directory, the in-memory
// rate limiter, TRUST_PROXY=true so clients spread over many X-Forwarded-For addresses) for a given time:
// valid reads, a few large replies, invalid bodies, denied reads, a burst on one key past RATE_LIMIT_MAX,
// key guessing from one address past RATE_LIMIT_IP_MAX, and other paths. It prints the statuses of each
// kind, latency percentiles, the server's RSS over the run and its live heap after each full GC (--trace-gc).
// Fails (exit 1) on any 5xx or status a kind should never get, any connection error or timeout, a burst that
// never reached its limit, an error logged by the server, a server that does not stop cleanly, or a live
// heap that keeps growing over the second half of the run.
// Options: --duration SECONDS (60)  --rate REQUESTS_PER_SECOND (400, offered at a fixed pace)
//          --connections N (64, most requests in flight)  --window MS (10000, RATE_LIMIT_WINDOW_MS)
//          --max-growth MIB_PER_MINUTE (2)  --log-level LEVEL (warn)

import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { Agent, request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { random, writeFixture } from "./lib/fixture.mjs"
import { commandLine } from "./lib/options.mjs"
import { build, root, start, status, stop } from "./lib/processes.mjs"

const option = commandLine(import.meta.url, ["duration", "rate", "connections", "window", "max-growth", "log-level"])
const duration = Number(option("duration", "60"))
const rate = Number(option("rate", "400"))
const connections = Number(option("connections", "64"))
const windowMillis = Number(option("window", "10000"))
const maxGrowth = Number(option("max-growth", "2"))
const logLevel = option("log-level", "warn")

// The fixture: USERS users with one key and FILES_PER_USER small files each; the last user is the burst's.
const USERS = 50
const FILES_PER_USER = 5
const READERS = USERS - 1
const BURST_USER = USERS - 1
const LARGE_SUBMISSIONS = 20_000
const ADDRESSES = 4096

const share = { valid: 0.55, invalid: 0.15, denied: 0.1, keyBurst: 0.08, keyGuessing: 0.1, other: 0.02 }
const LARGE_PER_SECOND = 0.5
const perWindow = (perSecond) => (perSecond * windowMillis) / 1000
// Readers stay far below their quotas (counts per window are about Poisson), bursts go far past theirs.
const keyMean = perWindow(rate * (share.valid + (share.denied * 2) / 3)) / READERS
const rateLimitMax = Math.ceil(2 * keyMean + 20)
const addressMean =
  perWindow(rate * (share.valid + share.invalid + share.denied + share.keyBurst + share.other)) / ADDRESSES
const rateLimitIpMax = Math.ceil(4 * addressMean + 20)
for (const [kind, limit] of [
  ["keyBurst", rateLimitMax],
  ["keyGuessing", rateLimitIpMax]
]) {
  if (perWindow(rate * share[kind]) < 2 * limit) {
    console.error(`${kind} would not go past its limit of ${limit} per window: raise --rate or --window`)
    process.exit(2)
  }
}

const next = random(7)
const pick = (count) => Math.floor(next() * count)
const pool = Array.from({ length: ADDRESSES }, () => `10.${pick(256)}.${pick(256)}.${1 + pick(254)}`)
const spread = () => ({ "x-forwarded-for": pool[pick(ADDRESSES)] })
const json = (value) => ({ "content-type": "application/json", body: JSON.stringify(value) })
const reader = () => pick(READERS)
const fileOf = (user) => `file-${user + USERS * pick(FILES_PER_USER)}`
const wrongKey = () => `fdk_${randomBytes(32).toString("base64url")}`
const oversized = JSON.stringify({ fileId: "file-0", apiKey: "k".repeat(70 * 1024) })

// Each kind: how to make its next request, the replies ("status code") it may get, and those it must get.
const kinds = {
  valid: {
    perSecond: rate * share.valid,
    make: () => {
      const user = reader()
      return { ...json({ fileId: fileOf(user), apiKey: `bench-key-${user}` }), headers: spread() }
    },
    expected: ["200"]
  },
  large: {
    perSecond: LARGE_PER_SECOND,
    timeout: 60_000,
    make: () => ({ ...json({ fileId: "large-file-0", apiKey: "large-bench-key-0" }), headers: spread() }),
    expected: ["200"]
  },
  invalid: {
    perSecond: rate * share.invalid,
    make: () => {
      const variants = [
        { "content-type": "application/json", body: '{"fileId":"file-0","apiKey":' },
        { "content-type": "application/json", body: "[1,2,3]" },
        { "content-type": "text/plain", body: JSON.stringify({ fileId: "file-0", apiKey: "bench-key-0" }) },
        json({ fileId: "file-0", apiKey: "bench-key-0", admin: true }),
        json({ fileId: "file-0" }),
        json({ fileId: "", apiKey: 42 }),
        { "content-type": "application/json", body: oversized }
      ]
      return { ...variants[pick(variants.length)], headers: spread() }
    },
    expected: ["422 validation_failed", "422 unsupported_media_type", "422 payload_too_large"]
  },
  denied: {
    perSecond: rate * share.denied,
    make: () => {
      const user = reader()
      const variants = [
        json({ fileId: fileOf(user), apiKey: wrongKey() }),
        json({ fileId: fileOf((user + 1) % READERS), apiKey: `bench-key-${user}` }),
        json({ fileId: `missing-${pick(1e9)}`, apiKey: `bench-key-${user}` })
      ]
      return { ...variants[pick(variants.length)], headers: spread() }
    },
    expected: ["403 access_denied", "404 file_not_found"]
  },
  keyBurst: {
    perSecond: rate * share.keyBurst,
    make: () => ({ ...json({ fileId: `file-${BURST_USER}`, apiKey: `bench-key-${BURST_USER}` }), headers: spread() }),
    expected: ["200", "422 rate_limited"],
    required: ["200", "422 rate_limited"]
  },
  keyGuessing: {
    perSecond: rate * share.keyGuessing,
    make: () => ({ ...json({ fileId: fileOf(0), apiKey: wrongKey() }), headers: { "x-forwarded-for": "192.0.2.66" } }),
    expected: ["403 access_denied", "422 rate_limited"],
    required: ["403 access_denied", "422 rate_limited"]
  },
  other: {
    perSecond: rate * share.other,
    make: () =>
      [
        { method: "GET", path: "/health" },
        { method: "GET", path: "/no-such-path" },
        { method: "GET", path: "/api/v1/file-data" }
      ][pick(3)],
    expected: ["200", "404 not_found", "405 method_not_allowed"],
    required: ["200", "404 not_found", "405 method_not_allowed"]
  }
}
for (const kind of Object.values(kinds)) {
  Object.assign(kind, { tokens: 0, skipped: 0, replies: new Map(), errors: new Map(), latencies: [], bytes: [] })
}

build()
const dir = mkdtempSync(join(tmpdir(), "filedata-soak-"))
let server
const cleanUp = () => {
  if (server !== undefined && server.child.exitCode === null) server.child.kill("SIGKILL")
  rmSync(dir, { recursive: true, force: true })
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    cleanUp()
    process.exit(130)
  })
}

const databaseUrl = `file:${join(dir, "soak.db")}`
for (const [name, shape] of [
  ["small", { users: USERS, files: USERS * FILES_PER_USER, submissionsPerFile: 5 }],
  ["large", { users: 1, files: 1, submissionsPerFile: LARGE_SUBMISSIONS, prefix: "large-" }]
]) {
  const fixture = join(dir, `${name}.json`)
  await writeFixture(fixture, shape)
  const imported = spawnSync(process.execPath, ["apps/cli/dist/bundle/main.js", "import", fixture], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" },
    encoding: "utf8"
  })
  if (imported.status !== 0) {
    cleanUp()
    throw new Error(`import of ${name} failed:\n${imported.stdout}\n${imported.stderr}`)
  }
}

// --trace-gc: V8 prints the heap after every full collection, the live data the server holds.
server = await start("filedata", ["--trace-gc", "apps/server/dist/bundle/main.js"], {
  DATABASE_URL: databaseUrl,
  REDIS_URL: undefined,
  PORT: "0",
  HOST: "127.0.0.1",
  TRUST_PROXY: "true",
  LOG_LEVEL: logLevel,
  RATE_LIMIT_MAX: String(rateLimitMax),
  RATE_LIMIT_IP_MAX: String(rateLimitIpMax),
  RATE_LIMIT_WINDOW_MS: String(windowMillis)
})
const pid = server.child.pid
const { port } = new URL(server.url)
let stopping = false
let exitedEarly
server.child.on("exit", (code, signal) => {
  if (!stopping) exitedEarly ??= `the server exited during the soak (${code ?? signal})`
})
const began = performance.now()
const elapsed = () => (performance.now() - began) / 1000
const heap = []
const logged = new Map()
const errorLines = []
let partial = ""
server.child.stdout.on("data", (chunk) => {
  const lines = (partial + chunk).split("\n")
  partial = lines.pop()
  for (const line of lines) {
    const collection = /Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \(/.exec(line)
    if (collection !== null) {
      heap.push({ seconds: elapsed(), mib: Number(collection[1]) })
      continue
    }
    let entry
    try {
      entry = JSON.parse(line)
    } catch {
      continue
    }
    logged.set(entry.logLevel, (logged.get(entry.logLevel) ?? 0) + 1)
    if (entry.logLevel === "ERROR" || entry.logLevel === "FATAL") errorLines.push(line)
  }
})

const agent = new Agent({ keepAlive: true, maxSockets: connections })
let inFlight = 0
const count = (map, key) => map.set(key, (map.get(key) ?? 0) + 1)
const labelOf = (statusCode, chunks) => {
  if (statusCode === 200) return "200"
  try {
    return `${statusCode} ${JSON.parse(Buffer.concat(chunks).toString("utf8")).code}`
  } catch {
    return `${statusCode} (no problem document)`
  }
}

const send = (kind) => {
  const { method = "POST", path = "/api/v1/file-data", headers = {}, body, ...rest } = kind.make()
  const contentType = rest["content-type"]
  inFlight++
  const sent = performance.now()
  let settled = false
  const settle = (outcome) => {
    if (settled) return
    settled = true
    inFlight--
    kind.latencies.push(performance.now() - sent)
    if (outcome.error !== undefined) return count(kind.errors, outcome.error)
    count(kind.replies, outcome.label)
    if (outcome.label === "200") kind.bytes.push(outcome.bytes)
  }
  const outgoing = request({
    agent,
    host: "127.0.0.1",
    port,
    method,
    path,
    timeout: kind.timeout ?? 10_000,
    headers: {
      ...headers,
      ...(contentType === undefined ? {} : { "content-type": contentType }),
      ...(body === undefined ? {} : { "content-length": Buffer.byteLength(body) })
    }
  })
  outgoing.on("response", (response) => {
    const chunks = []
    let bytes = 0
    response.on("data", (chunk) => {
      bytes += chunk.length
      if (response.statusCode !== 200) chunks.push(chunk)
    })
    response.on("end", () => settle({ label: labelOf(response.statusCode, chunks), bytes }))
    response.on("error", (error) => settle({ error: error.code ?? error.message }))
  })
  outgoing.on("timeout", () => outgoing.destroy(Object.assign(new Error("timed out"), { code: "timeout" })))
  outgoing.on("error", (error) => settle({ error: error.code ?? error.message }))
  outgoing.end(body)
}

const rss = [{ seconds: 0, mib: status(pid, "VmRSS") }]
let paced = performance.now()
// A fixed pace whatever the replies take: a request that finds every connection busy is skipped, not queued.
const pacer = setInterval(() => {
  const now = performance.now()
  const seconds = (now - paced) / 1000
  paced = now
  for (const kind of Object.values(kinds)) {
    kind.tokens = Math.min(kind.tokens + kind.perSecond * seconds, 1 + kind.perSecond / 10)
    for (; kind.tokens >= 1; kind.tokens--) {
      if (inFlight < connections) send(kind)
      else kind.skipped++
    }
  }
}, 10)
const sampler = setInterval(() => {
  if (server.child.exitCode === null) rss.push({ seconds: elapsed(), mib: status(pid, "VmRSS") })
}, 1000)
const progress = setInterval(() => {
  const done = Object.values(kinds).reduce((sum, kind) => sum + kind.latencies.length, 0)
  console.error(`${elapsed().toFixed(0)} s: ${done} replies, RSS ${rss.at(-1).mib.toFixed(0)} MiB`)
}, 30_000)

await new Promise((resolve) => setTimeout(resolve, duration * 1000))
clearInterval(pacer)
clearInterval(progress)
const drained = performance.now()
while (inFlight > 0 && performance.now() - drained < 60_000) await new Promise((resolve) => setTimeout(resolve, 50))
clearInterval(sampler)
const failures = []
if (inFlight > 0) failures.push(`${inFlight} requests still unanswered 60 s after the load stopped`)
if (exitedEarly !== undefined) failures.push(exitedEarly)
stopping = true
const exitCode = await stop(server)
agent.destroy()
cleanUp()
if (exitedEarly === undefined && exitCode !== 0) failures.push(`the server exited with ${exitCode} on SIGTERM`)

const percentile = (sorted, p) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
const ms = (value) => (Number.isNaN(value) ? "-" : value >= 100 ? value.toFixed(0) : value.toFixed(1))
const counted = (map) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${key} ×${n.toLocaleString("en")}`)
    .join(", ") || "-"
const row = (name, latencies, cells) => {
  const sorted = Float64Array.from(latencies).sort()
  const [p50, p90, p99] = [0.5, 0.9, 0.99].map((p) => ms(percentile(sorted, p)))
  return `| ${name} | ${cells.join(" | ")} | ${p50} | ${p90} | ${p99} | ${ms(sorted.at(-1) ?? NaN)} |`
}

console.log(
  `\nsoak: ${duration} s, ${rate} req/s offered, ${connections} connections, window ${windowMillis} ms, ` +
    `RATE_LIMIT_MAX ${rateLimitMax}, RATE_LIMIT_IP_MAX ${rateLimitIpMax} (node ${process.version})\n`
)
console.log("| kind | replies | errors | skipped | p50 ms | p90 ms | p99 ms | max ms |")
console.log("|---|---|---|---|---|---|---|---|")
const all = []
for (const [name, kind] of Object.entries(kinds)) {
  all.push(...kind.latencies)
  console.log(row(name, kind.latencies, [counted(kind.replies), counted(kind.errors), kind.skipped]))
  for (const [label, n] of kind.replies) {
    if (label.startsWith("5") || !kind.expected.includes(label)) failures.push(`${name}: ${n} × ${label}`)
  }
  for (const [error, n] of kind.errors) failures.push(`${name}: ${n} × ${error}`)
  for (const label of kind.required ?? []) {
    if (!kind.replies.has(label)) failures.push(`${name}: never answered ${label}`)
  }
}
const replies = all.length
console.log(row(`all (${(replies / duration).toFixed(0)} req/s)`, all, [replies.toLocaleString("en"), "", ""]))
const large = kinds.large.bytes
if (large.length > 0) {
  console.log(`\nlarge replies: ${large.length} of ${(Math.min(...large) / 1024 / 1024).toFixed(1)} MiB`)
}

// The floor of each 10 s bucket: garbage collection moves the peaks, a leak raises the floor.
const BUCKET = 10
const floors = []
for (const sample of rss.slice(1)) {
  const index = Math.floor(sample.seconds / BUCKET)
  floors[index] = { seconds: (index + 0.5) * BUCKET, mib: Math.min(floors[index]?.mib ?? Infinity, sample.mib) }
}
// Least squares slope over the second half of the run, in MiB per minute.
const trend = (points) => {
  const late = points.filter((point) => point !== undefined && point.seconds >= duration / 2)
  if (late.length < 3) return NaN
  const mx = late.reduce((sum, p) => sum + p.seconds, 0) / late.length
  const my = late.reduce((sum, p) => sum + p.mib, 0) / late.length
  const sxy = late.reduce((sum, p) => sum + (p.seconds - mx) * (p.mib - my), 0)
  const sxx = late.reduce((sum, p) => sum + (p.seconds - mx) ** 2, 0)
  return (sxy / sxx) * 60
}
const perMinute = (value) => (Number.isNaN(value) ? "-" : `${value >= 0 ? "+" : ""}${value.toFixed(2)} MiB/min`)
const peak = Math.max(...rss.map((sample) => sample.mib))
console.log(
  `\nserver RSS: ${rss[0].mib.toFixed(0)} MiB idle before the load, ${rss.at(-1).mib.toFixed(0)} MiB at the end, ` +
    `peak ${peak.toFixed(0)} MiB; floor trend over the second half ${perMinute(trend(floors))}`
)
console.log(`RSS floor per ${BUCKET} s, MiB: ${floors.map((floor) => floor?.mib.toFixed(0) ?? "-").join(" ")}`)
const heapTrend = trend(heap)
console.log(
  `heap after each full GC, MiB (${heap.length}): ${heap.map((point) => point.mib.toFixed(0)).join(" ")}; ` +
    `trend over the second half ${perMinute(heapTrend)}`
)
console.log(`server log lines by level: ${counted(logged)}`)
if (heapTrend > maxGrowth) failures.push(`the heap after full GCs grows ${perMinute(heapTrend)} over the second half`)
if (Number.isNaN(heapTrend)) failures.push("fewer than 3 full GCs in the second half: run longer to tell a trend")
if (errorLines.length > 0) failures.push(`${errorLines.length} errors logged, first: ${errorLines[0]}`)
if (failures.length > 0) {
  console.log(`\nFAILED:\n${failures.map((failure) => `- ${failure}`).join("\n")}`)
  process.exitCode = 1
}
