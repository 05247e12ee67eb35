// `pnpm bench:limiter`: the heap the in-memory rate limiter holds for distinct subjects, measured on the built
// package in this process (node --expose-gc): heap used after a full GC before, after every subject hit it
// inside one window, after one more window (still held: the previous generation) and after two (dropped).
// Subjects are made the way the server makes them: keys parsed out of JSON bodies, addresses read by the
// server's ClientAddress from the headers, so the figures include whatever those strings keep alive.
// Options: --subjects N (default 1000000: N keys and N addresses)  --bound BYTES (default 300 per subject)
// Exits non-zero when a scenario holds more than the bound per subject or keeps memory after two windows.

import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { commandLine } from "./lib/options.mjs"
import { build, root } from "./lib/processes.mjs"

const option = commandLine(import.meta.url, ["bound", "subjects"])
const subjects = Number(option("subjects", "1000000"))
const bound = Number(option("bound", "300"))

if (typeof globalThis.gc !== "function") {
  console.error("run with node --expose-gc (pnpm bench:limiter does)")
  process.exit(2)
}

build()

const dist = (path) => import(pathToFileURL(join(root, path)).href)
// The root does not depend on effect: take the very copy the limiter's dist imports, as ES modules, so the
// limiter and this script share one Effect runtime.
const fromLimiter = createRequire(join(root, "packages/rate-limiter-memory/package.json"))
const effect = (module) => {
  const manifest = fromLimiter.resolve("effect/package.json")
  const entry = JSON.parse(readFileSync(manifest, "utf8")).exports[`./${module}`].import
  return import(pathToFileURL(join(dirname(manifest), entry)).href)
}
const [{ MemoryRateLimiter }, ClientAddress, Effect, Redacted, TestClock, TestContext] = await Promise.all([
  dist("packages/rate-limiter-memory/dist/index.js"),
  dist("apps/server/dist/ClientAddress.js"),
  effect("Effect"),
  effect("Redacted"),
  effect("TestClock"),
  effect("TestContext")
])

const WINDOW = 60_000
const policy = { apiKey: { limit: 60, windowMillis: WINDOW }, clientAddress: { limit: 600, windowMillis: WINDOW } }

// As the server has them: a key is a string JSON.parse made, an address what ClientAddress read from a header.
const apiKey = (text) => ({
  scope: "apiKey",
  apiKey: Redacted.make(JSON.parse(`{"fileId":"file-1","apiKey":"${text}"}`).apiKey)
})
const fromHeader = (forwardedFor) => ({
  scope: "clientAddress",
  address: ClientAddress.of({ "x-forwarded-for": forwardedFor }, "::ffff:127.0.0.1", true)
})
const fromSocket = (peer) => ({ scope: "clientAddress", address: ClientAddress.of({}, peer, false) })

const ipv6 = (i) => `2001:db8:${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}::${(i % 251).toString(16)}`
const ipv4 = (i) => `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`
const padding = "198.51.100.7, ".repeat(292) // 4 KiB of entries a client may put before the proxy's own

const scenarios = [
  {
    name: "fdk_ keys + IPv6 addresses via X-Forwarded-For",
    count: 2 * subjects,
    hits: (i) => [fromHeader(ipv6(i)), apiKey(`fdk_${randomBytes(32).toString("base64url")}`)]
  },
  { name: "socket peers ::ffff:IPv4, no proxy", count: subjects, hits: (i) => [fromSocket(`::ffff:${ipv4(i)}`)] },
  {
    name: "1,000-character keys (hashed)",
    count: Math.ceil(subjects / 10),
    hits: (i) => [apiKey(`${"k".repeat(990)}${String(i).padStart(10, "0")}`)]
  },
  {
    name: "X-Forwarded-For with 4 KiB before the proxy's entry",
    count: Math.ceil(subjects / 50),
    hits: (i) => [fromHeader(`${padding}${ipv6(i)}`)]
  }
]

const heapUsed = () => {
  globalThis.gc()
  globalThis.gc()
  return process.memoryUsage().heapUsed
}

const measure = ({ count, hits }) =>
  Effect.gen(function* () {
    // Real timestamps, so the windows' start times are heap numbers as in the server.
    yield* TestClock.setTime(Date.now())
    const limiter = yield* MemoryRateLimiter.make(policy)
    const base = heapUsed()
    const began = performance.now()
    let made = 0
    for (let i = 0; made < count; i++) {
      for (const subject of hits(i)) {
        if (made++ < count) yield* limiter.consume(subject)
      }
    }
    const seconds = (performance.now() - began) / 1000
    const held = [yield* limiter.size, heapUsed() - base]
    yield* TestClock.adjust(WINDOW)
    const afterOne = [yield* limiter.size, heapUsed() - base]
    yield* TestClock.adjust(WINDOW)
    const afterTwo = [yield* limiter.size, heapUsed() - base]
    return { seconds, held, afterOne, afterTwo }
  }).pipe(Effect.provide(TestContext.TestContext), Effect.runPromise)

const MiB = 1024 * 1024
const failures = []
const rows = []
for (const scenario of scenarios) {
  const { seconds, held, afterOne, afterTwo } = await measure(scenario)
  const perSubject = held[1] / scenario.count
  console.error(`${scenario.name}: ${scenario.count} subjects in ${seconds.toFixed(1)} s`)
  rows.push(
    `| ${scenario.name} | ${scenario.count.toLocaleString("en")} | ${held[0].toLocaleString("en")} | ` +
      `${(held[1] / MiB).toFixed(1)} | ${perSubject.toFixed(0)} | ${afterOne[0].toLocaleString("en")}, ` +
      `${(afterOne[1] / MiB).toFixed(1)} | ${afterTwo[0]}, ${(afterTwo[1] / MiB).toFixed(1)} |`
  )
  if (held[0] !== scenario.count) failures.push(`${scenario.name}: ${held[0]} subjects held, ${scenario.count} sent`)
  if (perSubject > bound) failures.push(`${scenario.name}: ${perSubject.toFixed(0)} bytes per subject (bound ${bound})`)
  // Whatever is left after two windows must be noise next to what was held, not a share of it.
  if (afterTwo[1] > Math.max(MiB, held[1] / 100)) {
    failures.push(`${scenario.name}: ${(afterTwo[1] / MiB).toFixed(1)} MiB still held after two windows`)
  }
}

console.log(`\nin-memory rate limiter, heap after full GC (node ${process.version}, window ${WINDOW} ms)\n`)
console.log(
  "| subjects | sent | held | heap held, MiB | bytes per subject | after 1 window: held, MiB | after 2 windows: held, MiB |"
)
console.log("|---|---|---|---|---|---|---|")
for (const row of rows) console.log(row)
if (failures.length > 0) {
  console.log(`\nFAILED:\n${failures.map((failure) => `- ${failure}`).join("\n")}`)
  process.exitCode = 1
}
