// `node --expose-gc --max-semi-space-size=128 bench/immediate-run-with.mjs [coreDist ...]`: the cost of one
// `GetFileData.runWith` on ports that answer at once (as SQLite and the memory limiter do), its reply written
// through `FileDataEncoder.writeTo` to a writer that takes every piece at once. Each core's built `dist` given
// (default: this checkout's) is measured in interleaved rounds, in this process, sharing one Effect runtime:
// nanoseconds a request (median of rounds) and bytes allocated a request (heap used after a run of requests too
// short for a scavenge, less before, over the count). Build first (`pnpm build` or `pnpm typecheck`).
// Options: --requests N (default 20000 a round)  --rounds N (default 15)

import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { pathToFileURL } from "node:url"

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`)
  return at === -1 ? fallback : Number(args.splice(at, 2)[1])
}
const requests = option("requests", 20_000)
const rounds = option("rounds", 15)
const here = dirname(new URL(import.meta.url).pathname)
const dists = (args.length > 0 ? args : [join(here, "../packages/core/dist")]).map((path) => resolve(path))

if (typeof globalThis.gc !== "function") {
  console.error("run with node --expose-gc --max-semi-space-size=128")
  process.exit(2)
}

// The very Effect the core's dist imports, so every core measured shares one runtime.
const fromCore = createRequire(join(dists[0], "index.js"))
const Exit = await import(pathToFileURL(fromCore.resolve("effect/Exit")).href)
const Option = await import(pathToFileURL(fromCore.resolve("effect/Option")).href)

const entries = Array.from(
  { length: 3 },
  (_, i) => `{"createdDate":"2026-01-0${i + 1}T00:00:00.000Z","content":{"n":"${i}"}}`
)
const file = {
  id: "f1",
  ownerId: "alice",
  name: "Form",
  creationDate: "2026-01-01T00:00:00.000Z",
  publicAvailability: false,
  SubmissionCounter: 3,
  VisitCounter: 0,
  readPoint: "3"
}
const access = Exit.succeed({ owner: Option.some("alice"), file: Option.some(file) })
const page = Exit.succeed({ entries, next: undefined, hasMore: false })
const joined = Exit.succeed({ joined: entries.join(","), count: 3, next: undefined, hasMore: false })
const state = Exit.succeed({ scope: "apiKey", limit: 1e9, windowMillis: 60_000, remaining: 1e9, resetMillis: 60_000 })
const readJoined = () => joined
// Ports answering at once, with the joined pages SQLite gives under both names the cores measured know.
const files = {
  findAccess: () => access,
  readSubmissions: () => page,
  readJoinedSubmissions: readJoined,
  encodedPages: { readJoined, readExportRows: readJoined },
  readContentNames: () => Exit.succeed([]),
  findFile: () => Exit.succeed(Option.some(file)),
  ping: Exit.void
}
const limiter = {
  policy: { apiKey: { limit: 1e9, windowMillis: 60_000 }, clientAddress: { limit: 1e9, windowMillis: 60_000 } },
  consume: () => state
}
const body = Exit.succeed({ fileId: "f1", apiKey: "alice-key" })
const write = () => Exit.void

const cores = await Promise.all(
  dists.map(async (dist) => {
    const { FileDataEncoder, GetFileData } = await import(pathToFileURL(join(dist, "index.js")).href)
    const ports = { files, limiter }
    return (n) => {
      let written = 0
      for (let i = 0; i < n; i++) {
        const answered = GetFileData.runWith(ports, { clientAddress: "127.0.0.1", body, fields: {} })
        if (!Exit.isExit(answered) || Exit.isFailure(answered)) throw new Error("not answered at once")
        const out = FileDataEncoder.writeTo(answered.value, write)
        if (!Exit.isExit(out)) throw new Error("not written at once")
        written++
      }
      return written
    }
  })
)

for (const run of cores) run(requests) // warm up
const times = cores.map(() => [])
const bytes = cores.map(() => [])
for (let round = 0; round < rounds; round++) {
  cores.forEach((run, i) => {
    globalThis.gc()
    const before = process.memoryUsage().heapUsed
    const start = process.hrtime.bigint()
    run(requests)
    const ns = Number(process.hrtime.bigint() - start)
    bytes[i].push((process.memoryUsage().heapUsed - before) / requests)
    times[i].push(ns / requests)
  })
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
dists.forEach((dist, i) => {
  console.log(
    `${dist}: ${median(times[i]).toFixed(0)} ns a request, ${median(bytes[i]).toFixed(0)} bytes allocated a request`
  )
})
