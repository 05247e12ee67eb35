// `pnpm bench`: seeded datasets, imported with the real CLI and with the plain importer
// (bench/baseline-import.mjs), served by the real server and by the baseline (bench/baseline.mjs, the strongest
// plain implementation), measured interleaved so machine drift hits both; ends with every target of
// docs/performance.md, its measured figure and whether it is met.
// Options: --profiles small,large,huge  --duration 10  --connections 32  --rounds 2  --warmup 5 (seconds)
// --levels warn,info: the LOG_LEVELs the small profile serves filedata at (default: BENCH_LOG_LEVEL, else warn,
// and info). --starts 5: starts of each kind for the start-up rows (0: none). --replies 3: repetitions of each
// big-reply measurement (median time, largest memory). --codings gzip,br: the content codings the big replies of
// large and huge are also measured in ("" for none).
// large-pg, huge-pg: the same on the large and huge datasets, their big replies and exports (only when named).
// small-pg: the small dataset served by filedata on PostgreSQL and Redis (BENCH_DATABASE_URL or TEST_DATABASE_URL,
// BENCH_REDIS_URL or TEST_REDIS_URL; a fresh database is created and dropped), against the plain PostgreSQL and
// Redis server (bench/baseline-pg.mjs) on a copy of that database, with the same pool size; both report
// PostgreSQL's (their databases' backends) and Redis's CPU a request beside their own. It joins the default
// profiles when both URLs are set.
// scale, scale-pg: the change feed and erasure of a million-submission file (bench/lib/scale.mjs; only when named).
// wakeups, wakeups-pg: how soon another process's append answers a waiting incremental read and reaches a webhook's
// receiver, on SQLite and on PostgreSQL (bench/wakeups.mjs; a fresh database, dropped after; wakeups-pg joins the
// default profiles when BENCH_DATABASE_URL or TEST_DATABASE_URL is set). --wakeups 100: samples of each.
// --against DIR: another checkout (its own `pnpm install` done; built here) served beside this one in the same
// interleaved rounds, on the same data, for the small, big-reply and start-up rows: what a change buys on its row
// (docs/performance.md#how-to-measure). Its rows say "against"; "filedata / against" rows compare the two.

import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { createRequire } from "node:module"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { createBrotliDecompress, createGunzip } from "node:zlib"
import { writeFixture } from "./lib/fixture.mjs"
import { bodiesOf, load } from "./lib/load.mjs"
import { commandLine } from "./lib/options.mjs"
import { build, cpuMs, resetPeak, root, start, status, stop } from "./lib/processes.mjs"
import { measureScale, sqliteDatabase } from "./lib/scale.mjs"
import { wakeupRows } from "./lib/wakeups.mjs"

const work = join(root, ".bench")
const option = commandLine(import.meta.url, [
  "profiles",
  "duration",
  "connections",
  "rounds",
  "warmup",
  "levels",
  "starts",
  "replies",
  "codings",
  "out",
  "wakeups",
  "against"
])
const databaseUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined
const redisUrl = process.env.BENCH_REDIS_URL || process.env.TEST_REDIS_URL || undefined
const profiles = option(
  "profiles",
  [
    "small,large,huge",
    databaseUrl && redisUrl ? "small-pg" : undefined,
    "wakeups",
    databaseUrl ? "wakeups-pg" : undefined
  ]
    .filter(Boolean)
    .join(",")
).split(",")
const duration = Number(option("duration", "10"))
// filedata's pool size (DATABASE_POOL_MAX), given to the plain PostgreSQL server too.
const poolMax = process.env.DATABASE_POOL_MAX || "10"
const connections = Number(option("connections", "32"))
const rounds = Number(option("rounds", "2"))
const warmup = Number(option("warmup", "5"))
const starts = Number(option("starts", "5"))
const repeats = Math.max(1, Number(option("replies", "3")))
const wakeupSamples = Number(option("wakeups", "100"))
// The level the small profile's targets of requests/s and p99 are set at, and the contract's default.
const benchLevel = process.env.BENCH_LOG_LEVEL || "warn"
const levels = option("levels", [...new Set([benchLevel, "info"])].join(","))
  .split(",")
  .filter((level) => level !== "")
// The codings `pnpm bench` measures filedata's big replies in, beside identity.
// The figures' table, also written here (docs/performance.md links it); "-" writes it only to stdout.
// A run against another checkout compares two versions, not the product's figures: it writes under .bench/.
const against = option("against", undefined)
const out = option("out", join(root, against === undefined ? "bench/results/latest.md" : ".bench/against.md"))
const loadAtStart = loadavg()
const codings = option("codings", "gzip,br")
  .split(",")
  .filter((coding) => coding !== "")

const shapes = {
  small: { files: 1000, submissionsPerFile: 20, users: 100, load: true },
  large: { files: 1, submissionsPerFile: 100_000, users: 1 },
  huge: { files: 1, submissionsPerFile: 1_000_000, users: 1 },
  // Entries of about 300 bytes, as forms with a free-text field store them.
  wide: { files: 1, submissionsPerFile: 100_000, users: 1, contentBytes: 260 },
  "wide-huge": { files: 1, submissionsPerFile: 1_000_000, users: 1, contentBytes: 260 }
}
// Profiles served from PostgreSQL and Redis: the dataset of another profile, whose fixture and SQLite baseline
// they share. large-pg and huge-pg run only when named: big replies and exports on PostgreSQL.
const onPostgres = { "small-pg": "small", "large-pg": "large", "huge-pg": "huge" }

// The `pg` driver the PostgreSQL adapter uses, reached through that package (the root does not depend on it).
const pgClient = (connectionString) => {
  const fromPostgres = createRequire(join(root, "packages/postgres/package.json"))
  const pg = createRequire(fromPostgres.resolve("@effect/sql-pg/package.json"))("pg")
  return new pg.Client({ connectionString })
}
const admin = async (statement, values) => {
  const client = pgClient(databaseUrl)
  await client.connect()
  try {
    return (await client.query(statement, values)).rows
  } finally {
    await client.end()
  }
}
const pgUrl = (database) => {
  const url = new URL(databaseUrl)
  url.pathname = `/${database}`
  return url.toString()
}
// CPU time (ms) of every backend serving `database`, by process id, from /proc (PostgreSQL runs on this
// machine); a backend gone by the end of a round loses its share, which a pool under load never closes.
const backendsCpu = async (database) => {
  const rows = await admin("SELECT pid FROM pg_stat_activity WHERE datname = $1", [database])
  const cpu = new Map()
  for (const { pid } of rows) {
    try {
      cpu.set(pid, cpuMs(pid))
    } catch {}
  }
  return cpu
}
const backendsCpuSince = (before, after) => {
  let total = 0
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0)
  return total
}
// Redis's CPU time (ms, user + system, the whole server: other clients of it count too).
const redisCpuMs = () => {
  const { hostname, port } = new URL(redisUrl)
  const info = spawnSync("redis-cli", ["-h", hostname, "-p", port || "6379", "info", "cpu"], { encoding: "utf8" })
  const field = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info.stdout)?.[1] ?? Number.NaN)
  return (field("used_cpu_user") + field("used_cpu_sys")) * 1000
}

// Runs a command under /usr/bin/time for its wall time, CPU time (user + system) and peak RSS.
const timed = (args, env) => {
  const result = spawnSync("/usr/bin/time", ["-f", "%e %M %U %S", process.execPath, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: "utf8"
  })
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed:\n${result.stdout}\n${result.stderr}`)
  const [seconds, kilobytes, user, system] = result.stderr.trim().split("\n").at(-1).split(" ").map(Number)
  return { seconds, cpuSeconds: user + system, rssMiB: kilobytes / 1024 }
}

const removeDatabase = (path) => {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${path}${suffix}`, { force: true })
}

// What the two imports wrote, in a form cheap to compare: the rows of each table and the entries' total length.
const contents = (path) => {
  const Database = createRequire(import.meta.url)("better-sqlite3")
  const db = new Database(path, { readonly: true })
  try {
    return db
      .prepare(
        `SELECT (SELECT count(*) FROM users) || ' ' || (SELECT count(*) FROM api_keys) || ' ' ||
           (SELECT count(*) FROM files) || ' ' || (SELECT count(*) || ' ' || total(length(entry)) FROM submissions)`
      )
      .pluck()
      .get()
  } finally {
    db.close()
  }
}

const loadOn = (server, bodies, seconds = duration) => load(server.url, bodies, { seconds, connections })

// The reply as sent, over node:http: bytes on the wire, time to the last byte; with `decoded`, also the length
// once decoded, to check the compressed reply against the identity one.
const downloadRaw = (server, body, encoding, decoded = false, path = "/api/v1/file-data") =>
  new Promise((resolve, reject) => {
    const began = performance.now()
    const req = httpRequest(`${server.url}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(encoding === "identity" ? {} : { "accept-encoding": encoding })
      }
    })
    req.on("error", reject)
    req.on("response", (res) => {
      if (res.statusCode !== 200) reject(new Error(`${server.name} answered ${res.statusCode}`))
      const coding = res.headers["content-encoding"] ?? "identity"
      if (coding !== encoding) reject(new Error(`${server.name} answered ${coding} to ${encoding}`))
      let bytes = 0
      let plain = 0
      const decoder =
        !decoded || coding === "identity" ? undefined : coding === "br" ? createBrotliDecompress() : createGunzip()
      decoder?.on("data", (chunk) => (plain += chunk.length))
      res.on("data", (chunk) => {
        bytes += chunk.length
        if (decoder === undefined) plain += chunk.length
        else decoder.write(chunk)
      })
      res.on("end", () => {
        const ms = performance.now() - began
        if (decoder === undefined) return resolve({ ms, bytes, plain })
        decoder.on("end", () => resolve({ ms, bytes, plain }))
        decoder.end()
      })
    })
    req.end(body)
  })

// One reply, or `parallel` at once, in `encoding`: time to the last byte, bytes on the wire of one reply, the
// server's CPU time, and its peak RSS above the RSS just before.
const replies = async (server, body, encoding, parallel, path = undefined) => {
  const idle = status(server.child.pid, "VmRSS")
  resetPeak(server.child.pid)
  const cpu = cpuMs(server.child.pid)
  const began = performance.now()
  const done = await Promise.all(
    Array.from({ length: parallel }, () => downloadRaw(server, body, encoding, false, path))
  )
  return {
    ms: performance.now() - began,
    bytes: done[0].bytes,
    cpuMs: cpuMs(server.child.pid) - cpu,
    aboveIdle: status(server.child.pid, "VmHWM") - idle
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length
// The list turned by `by` places, so each server goes first in turn.
const rotate = (list, by) => list.map((_, i) => list[(i + by) % list.length])

const rows = []
const row = (profile, metric, server, baseline, unit) =>
  rows.push({ profile, metric, filedata: server, baseline, unit, ratio: baseline ? server / baseline : Number.NaN })
const targets = []
const target = (name, measured, bound, met) => targets.push({ name, measured, bound, met })
const imports = {}

mkdirSync(work, { recursive: true })
build()
if (against !== undefined) build(against)

const measure = async (profile) => {
  const dataset = onPostgres[profile] ?? profile
  const shape = shapes[dataset]
  if (shape === undefined) throw new Error(`unknown profile ${profile}`)
  if (onPostgres[profile] !== undefined && !(databaseUrl && redisUrl)) {
    throw new Error(
      `${profile} needs BENCH_DATABASE_URL (or TEST_DATABASE_URL) and BENCH_REDIS_URL (or TEST_REDIS_URL)`
    )
  }
  const fixture = join(work, `${dataset}.json`)
  // Each profile its own SQLite file, so the PostgreSQL profile never replaces the file another one serves.
  const db = join(work, `${profile}.db`)
  if (!existsSync(fixture)) {
    console.error(`generating ${dataset} fixture...`)
    await writeFixture(fixture, shape)
  }
  removeDatabase(db)
  let serverUrl = `file:${db}`
  let pg
  if (onPostgres[profile] !== undefined) {
    // filedata gets a fresh database; the baseline, once filedata has imported, a copy of it.
    const name = `filedata_bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`
    pg = { filedata: name, baseline: `${name}_plain` }
    await admin(`CREATE DATABASE ${pg.filedata}`)
    serverUrl = pgUrl(pg.filedata)
  }
  try {
    importBoth(profile, db, serverUrl, fixture)
    if (pg !== undefined) await admin(`CREATE DATABASE ${pg.baseline} TEMPLATE ${pg.filedata}`)
    await serve(profile, shape, db, serverUrl, pg)
  } finally {
    if (pg !== undefined) {
      for (const name of [pg.filedata, pg.baseline]) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    }
  }
}

// The fixture imported by filedata's CLI (into the database the profile serves) and by the plain importer (into
// a file of its own, then compared with filedata's when both are SQLite).
const importBoth = (profile, db, serverUrl, fixture) => {
  const plainDb = join(work, `${profile}-baseline-import.db`)
  removeDatabase(plainDb)
  const plain = timed(["bench/baseline-import.mjs", plainDb, fixture], {})
  const imported = timed(["apps/cli/dist/bundle/main.js", "import", fixture], {
    DATABASE_URL: serverUrl,
    LOG_LEVEL: "warn"
  })
  console.error(
    `${profile}: imported in ${imported.seconds.toFixed(1)} s, peak RSS ${imported.rssMiB.toFixed(0)} MiB ` +
      `(plain importer: ${plain.seconds.toFixed(1)} s, ${plain.rssMiB.toFixed(0)} MiB)`
  )
  if (onPostgres[profile] === undefined) {
    const [ours, theirs] = [contents(db), contents(plainDb)]
    if (ours !== theirs) throw new Error(`${profile}: the imports differ: ${ours} against ${theirs}`)
  }
  removeDatabase(plainDb)
  row(profile, "import time", imported.seconds, plain.seconds, "s")
  row(profile, "import CPU time", imported.cpuSeconds, plain.cpuSeconds, "s")
  row(profile, "import peak RSS", imported.rssMiB, plain.rssMiB, "MiB")
  imports[profile] = { filedata: imported, baseline: plain }
}

// Start-up, `starts` times each kind in turn: time to the listening line, the process's CPU time by then (pnpm's
// own process aside), and RSS a second after it.
const startUp = async (db, env) => {
  const kinds = [
    { name: "pnpm start", args: ["start"], options: { command: "pnpm", detached: true } },
    { name: "node scripts/run.mjs server", args: ["scripts/run.mjs", "server"], rss: true },
    { name: "node apps/server/dist/bundle/main.js", args: ["apps/server/dist/bundle/main.js"], rss: true },
    { name: "baseline", args: ["bench/baseline.mjs", db, "0"], rss: true },
    ...(against === undefined
      ? []
      : [
          {
            name: "against: node apps/server/dist/bundle/main.js",
            args: ["apps/server/dist/bundle/main.js"],
            options: { cwd: against },
            rss: true
          }
        ])
  ]
  const measured = new Map(kinds.map((kind) => [kind.name, { ms: [], cpu: [], rss: [] }]))
  for (let i = 0; i < starts; i++) {
    for (const kind of rotate(kinds, i)) {
      const server = await start(kind.name, kind.args, env, undefined, kind.options)
      measured.get(kind.name).ms.push(server.startupMs)
      if (kind.rss) {
        measured.get(kind.name).cpu.push(cpuMs(server.child.pid))
        await sleep(1000)
        measured.get(kind.name).rss.push(status(server.child.pid, "VmRSS"))
      }
      await stop(server)
    }
  }
  const of = (name) => measured.get(name)
  const baseline = of("baseline")
  for (const kind of kinds.slice(0, 3)) {
    row("start", `to the listening line: ${kind.name}`, median(of(kind.name).ms), median(baseline.ms), "ms")
  }
  for (const kind of kinds.slice(1, 3)) {
    row("start", `CPU time to the listening line: ${kind.name}`, median(of(kind.name).cpu), median(baseline.cpu), "ms")
  }
  for (const kind of kinds.slice(1, 3)) {
    row("start", `idle RSS after start: ${kind.name}`, median(of(kind.name).rss), median(baseline.rss), "MiB")
  }
  // The target holds in every round: the server's own start (the bundle) against the plain server's start of the
  // same round; `pnpm`'s own start is not the server's to cut (docs/performance.md#where-start-up-goes).
  const bundle = "node apps/server/dist/bundle/main.js"
  if (against !== undefined) {
    const theirs = of(`against: ${bundle}`)
    row("start / against", `to the listening line: ${bundle}`, median(of(bundle).ms), median(theirs.ms), "ms")
    row(
      "start / against",
      `CPU time to the listening line: ${bundle}`,
      median(of(bundle).cpu),
      median(theirs.cpu),
      "ms"
    )
    row("start / against", `idle RSS after start: ${bundle}`, median(of(bundle).rss), median(theirs.rss), "MiB")
  }
  const ratios = of(bundle).ms.map((ms, i) => ms / baseline.ms[i])
  const worst = Math.max(...ratios)
  target(
    "the bundle's start to the listening line, against the baseline's start (every round)",
    `${ratios.map((ratio) => `${ratio.toFixed(2)}x`).join(", ")} (median ${median(of(bundle).ms).toFixed(0)} ms)`,
    "<= 2.5x",
    worst <= 2.5
  )
  const idle = median(of("node scripts/run.mjs server").rss)
  target("idle RSS after start (median)", `${idle.toFixed(0)} MiB`, "<= 90 MiB", idle <= 90)
}

const serve = async (profile, shape, db, serverUrl, pg) => {
  const env = {
    DATABASE_URL: serverUrl,
    ...(onPostgres[profile] === undefined ? {} : { REDIS_URL: redisUrl }),
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: benchLevel,
    RATE_LIMIT_MAX: "1000000000",
    RATE_LIMIT_IP_MAX: "1000000000"
  }
  if (profile === "small" && starts > 0) await startUp(db, env)
  const served = shape.load && onPostgres[profile] === undefined ? levels : [benchLevel]
  const servers = []
  for (const level of served) {
    // What `pnpm start` runs (the build check included), each filedata's output to a file of its own.
    const name = `${profile} @${level}`
    servers.push(
      await start(
        name,
        ["scripts/run.mjs", "server"],
        { ...env, LOG_LEVEL: level },
        join(work, `${profile}-${level}.log`)
      )
    )
    if (against !== undefined) {
      servers.push(
        await start(
          `against ${name}`,
          [join(against, "scripts/run.mjs"), "server"],
          { ...env, LOG_LEVEL: level },
          join(work, `${profile}-${level}-against.log`),
          { cwd: against }
        )
      )
    }
  }
  const baseline =
    pg === undefined
      ? await start("baseline", ["bench/baseline.mjs", db, "0"], {})
      : await start("baseline", ["bench/baseline-pg.mjs", pgUrl(pg.baseline), redisUrl, "0", poolMax], {
          RATE_LIMIT_MAX: env.RATE_LIMIT_MAX,
          RATE_LIMIT_IP_MAX: env.RATE_LIMIT_IP_MAX
        })
  if (pg !== undefined) {
    for (const server of servers) server.database = pg.filedata
    baseline.database = pg.baseline
  }
  servers.push(baseline)
  try {
    if (shape.load) await underLoad(profile, shape, servers, baseline)
    else {
      await bigReplies(
        profile,
        servers[0],
        baseline,
        servers.find((server) => server.name.startsWith("against"))
      )
      await exportReplies(profile, servers[0])
    }
  } finally {
    await Promise.all(servers.map(stop))
  }
}

const underLoad = async (profile, shape, servers, baseline) => {
  const bodies = bodiesOf(shape)
  // Every server gets the same load unmeasured first, so the rounds compare code the JIT has compiled, not the
  // first seconds of a cold start (which cost filedata, with more code to compile, far more).
  for (const server of servers) if (warmup > 0) await loadOn(server, bodies, warmup)
  const results = new Map(servers.map((server) => [server.name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const server of rotate(servers, round)) {
      const pid = server.child.pid
      resetPeak(pid)
      const backends = server.database === undefined ? undefined : await backendsCpu(server.database)
      const redisCpu = server.database === undefined ? undefined : redisCpuMs()
      const cpu = cpuMs(pid)
      const result = await loadOn(server, bodies)
      const perRequest = (ms) => (ms * 1000) / result.requests.total
      const cpuPerRequest = perRequest(cpuMs(pid) - cpu)
      const pgPerRequest =
        backends === undefined ? undefined : perRequest(backendsCpuSince(backends, await backendsCpu(server.database)))
      const redisPerRequest = redisCpu === undefined ? undefined : perRequest(redisCpuMs() - redisCpu)
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(`${server.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
      results.get(server.name).push({
        rps: result.requests.average,
        p50: result.latencyMs.p50,
        p99: result.latencyMs.p99,
        cpuPerRequest,
        pgPerRequest,
        redisPerRequest,
        peak: status(pid, "VmHWM")
      })
      console.error(
        `${server.name} round ${round + 1}: ${result.requests.average} req/s, p99 ${result.latencyMs.p99.toFixed(2)} ms, ` +
          `${cpuPerRequest.toFixed(0)} µs of server CPU a request` +
          (pgPerRequest === undefined
            ? ""
            : `, ${pgPerRequest.toFixed(0)} µs of PostgreSQL's, ${redisPerRequest.toFixed(0)} µs of Redis's`)
      )
    }
  }
  const plain = results.get(baseline.name)
  for (const server of servers) {
    if (server === baseline) continue
    const ours = results.get(server.name)
    // The rounds' own ratios show how far machine drift moves the figure the table averages.
    console.error(
      `${server.name} requests/s ratio per round: ${ours.map((r, i) => (r.rps / plain[i].rps).toFixed(2)).join(", ")}`
    )
    const figure = (metric, pick, unit) => {
      row(server.name, metric, mean(ours.map(pick)), mean(plain.map(pick)), unit)
      return mean(ours.map(pick)) / mean(plain.map(pick))
    }
    const rps = figure("requests/s", (r) => r.rps, "req/s")
    figure("p50 latency", (r) => r.p50, "ms")
    const p99 = figure("p99 latency", (r) => r.p99, "ms")
    figure("server CPU a request", (r) => r.cpuPerRequest, "µs")
    figure("peak RSS under load", (r) => r.peak, "MiB")
    const theirs = results.get(`against ${server.name}`)
    if (theirs !== undefined) {
      console.error(
        `${server.name} requests/s / against per round: ${ours.map((r, i) => (r.rps / theirs[i].rps).toFixed(3)).join(", ")}`
      )
      const versus = (metric, pick, unit) =>
        row(`${server.name} / against`, metric, mean(ours.map(pick)), mean(theirs.map(pick)), unit)
      versus("requests/s", (r) => r.rps, "req/s")
      versus("p99 latency", (r) => r.p99, "ms")
      versus("server CPU a request", (r) => r.cpuPerRequest, "µs")
    }
    if (server.name.startsWith("against")) continue
    if (onPostgres[profile] !== undefined) {
      figure("PostgreSQL CPU a request", (r) => r.pgPerRequest, "µs")
      figure("Redis CPU a request", (r) => r.redisPerRequest, "µs")
      target(
        `${server.name}: requests/s against the plain PostgreSQL server`,
        `${rps.toFixed(2)}x`,
        ">= 0.8x",
        rps >= 0.8
      )
      target(
        `${server.name}: p99 latency against the plain PostgreSQL server`,
        `${p99.toFixed(2)}x`,
        "<= 1.3x",
        p99 <= 1.3
      )
      continue
    }
    const level = server.name.slice(server.name.indexOf("@") + 1)
    if (level === benchLevel) {
      target(`${server.name}: requests/s`, `${rps.toFixed(2)}x`, ">= 0.85x", rps >= 0.85)
      target(`${server.name}: p99 latency`, `${p99.toFixed(2)}x`, "<= 1.3x", p99 <= 1.3)
    }
    if (level === "info") target(`${server.name}: requests/s`, `${rps.toFixed(2)}x`, ">= 0.75x", rps >= 0.75)
  }
}

const bigReplies = async (profile, filedata, baseline, other) => {
  const servers = [filedata, baseline, other].filter((server) => server !== undefined)
  const role = (server) => (server === baseline ? "baseline" : server === other ? "against" : "filedata")
  const body = JSON.stringify({ fileId: "file-0", apiKey: "bench-key-0" })
  // The first reply after start, above the idle server as it started: what the first client meets, with the heap
  // at its start-up size and the code not compiled yet. The rows below measure a warmed server.
  const first = {}
  for (const server of servers) first[role(server)] = await replies(server, body, "identity", 1)
  if (first.filedata.bytes !== first.baseline.bytes) {
    throw new Error(`reply sizes differ: ${first.filedata.bytes} vs ${first.baseline.bytes}`)
  }
  row(profile, "time to last byte, first reply after start", first.filedata.ms, first.baseline.ms, "ms")
  row(
    profile,
    "peak RSS above idle, first reply after start",
    first.filedata.aboveIdle,
    first.baseline.aboveIdle,
    "MiB"
  )
  if (other !== undefined) {
    row(`${profile} / against`, "time to last byte, first reply after start", first.filedata.ms, first.against.ms, "ms")
    row(
      `${profile} / against`,
      "peak RSS above idle, first reply after start",
      first.filedata.aboveIdle,
      first.against.aboveIdle,
      "MiB"
    )
  }

  const reference = {}
  for (const parallel of [1, 4]) {
    const label = parallel === 1 ? "1 reply" : `${parallel} in parallel`
    const measured = { filedata: [], baseline: [], against: [] }
    for (let i = 0; i < repeats; i++) {
      for (const server of rotate(servers, i + parallel)) {
        measured[role(server)].push(await replies(server, body, "identity", parallel))
      }
    }
    const summary = (list) => ({
      ms: median(list.map((m) => m.ms)),
      cpuMs: median(list.map((m) => m.cpuMs)),
      aboveIdle: Math.max(...list.map((m) => m.aboveIdle)),
      bytes: list[0].bytes
    })
    const ours = summary(measured.filedata)
    const plain = summary(measured.baseline)
    reference[parallel] = plain
    row(profile, `time to last byte, ${label}`, ours.ms, plain.ms, "ms")
    row(profile, `server CPU, ${label}`, ours.cpuMs, plain.cpuMs, "ms")
    row(profile, `peak RSS above idle, ${label} (largest of ${repeats})`, ours.aboveIdle, plain.aboveIdle, "MiB")
    if (other !== undefined) {
      const theirs = summary(measured.against)
      row(`${profile} / against`, `time to last byte, ${label}`, ours.ms, theirs.ms, "ms")
      row(`${profile} / against`, `server CPU, ${label}`, ours.cpuMs, theirs.cpuMs, "ms")
      row(`${profile} / against`, `peak RSS above idle, ${label}`, ours.aboveIdle, theirs.aboveIdle, "MiB")
    }
    const ratio = ours.ms / plain.ms
    target(`${profile}: time to last byte, ${label}`, `${ratio.toFixed(2)}x`, "<= 1.0x", ratio <= 1)
    target(
      `${profile}: peak RSS above idle, ${label}`,
      `${ours.aboveIdle.toFixed(1)} MiB`,
      "<= 32 MiB",
      ours.aboveIdle <= 32
    )
  }
  if (codings.length === 0) return
  // Compressed replies (Accept-Encoding), against the baseline's uncompressed ones above, which never compress.
  // Server CPU covers zlib's threads too. Each coding first checked to decode to the identity reply's length.
  for (const coding of codings) {
    const checked = await downloadRaw(filedata, body, coding, true)
    if (checked.plain !== first.filedata.bytes) {
      throw new Error(`${coding} reply decodes to ${checked.plain} bytes, identity is ${first.filedata.bytes}`)
    }
  }
  for (const parallel of [1, 4]) {
    const label = parallel === 1 ? "1 reply" : `${parallel} in parallel`
    for (const coding of codings) {
      const measured = await replies(filedata, body, coding, parallel)
      const plain = reference[parallel]
      row(profile, `${coding}: time to last byte, ${label}`, measured.ms, plain.ms, "ms")
      row(profile, `${coding}: server CPU, ${label}`, measured.cpuMs, plain.cpuMs, "ms")
      if (parallel === 1)
        row(profile, `${coding}: bytes on the wire`, measured.bytes / 1048576, plain.bytes / 1048576, "MiB")
      row(profile, `${coding}: peak RSS above idle, ${label}`, measured.aboveIdle, plain.aboveIdle, "MiB")
    }
  }
}

// The export (POST /api/v1/file-data/export) of the same file, CSV and NDJSON, identity and gzip, against
// filedata's own reply of the file in the same coding, the two interleaved: time to the last byte (median of
// `repeats`) and peak RSS above idle (largest).
const exportReplies = async (profile, filedata) => {
  const credentials = { fileId: "file-0", apiKey: "bench-key-0" }
  const whole = JSON.stringify(credentials)
  for (const coding of ["identity", ...codings.filter((c) => c === "gzip")]) {
    for (const format of ["csv", "ndjson"]) {
      const body = JSON.stringify({ ...credentials, format })
      const ours = []
      const reference = []
      for (let i = 0; i < repeats; i++) {
        const pair = [
          async () => ours.push(await replies(filedata, body, coding, 1, "/api/v1/file-data/export")),
          async () => reference.push(await replies(filedata, whole, coding, 1))
        ]
        for (const run of rotate(pair, i)) await run()
      }
      const ms = median(ours.map((m) => m.ms))
      const referenceMs = median(reference.map((m) => m.ms))
      const aboveIdle = Math.max(...ours.map((m) => m.aboveIdle))
      const label = `export ${format} ${coding}`
      row(profile, `${label}: time to last byte (baseline: the file's reply)`, ms, referenceMs, "ms")
      row(profile, `${label}: peak RSS above idle`, aboveIdle, Math.max(...reference.map((m) => m.aboveIdle)), "MiB")
      target(
        `${profile}: ${label} time against the file's reply`,
        `${(ms / referenceMs).toFixed(2)}x`,
        "<= 1.2x",
        ms / referenceMs <= 1.2
      )
      target(`${profile}: ${label} peak RSS above idle`, `${aboveIdle.toFixed(1)} MiB`, "<= 32 MiB", aboveIdle <= 32)
    }
  }
}

// scale, scale-pg: the change feed and erasure at a million submissions (bench/lib/scale.mjs), on SQLite and on
// PostgreSQL + Redis; only when named.
const scaleDatabases = {
  scale: sqliteDatabase(work),
  "scale-pg": async () => {
    if (!(databaseUrl && redisUrl)) throw new Error("scale-pg needs the PostgreSQL and Redis URLs, as small-pg")
    const name = `filedata_bench_${Date.now().toString(36)}_scale`
    await admin(`CREATE DATABASE ${name}`)
    return { url: pgUrl(name), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
  }
}
const scale = (profile) =>
  measureScale(profile, {
    work,
    database: scaleDatabases[profile],
    env: {
      ...(profile === "scale-pg" ? { REDIS_URL: redisUrl } : {}),
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: benchLevel,
      RATE_LIMIT_MAX: "1000000000",
      RATE_LIMIT_IP_MAX: "1000000000"
    },
    row,
    target
  })

// Wake-ups have no baseline: their rows are filedata's latencies, their targets the issue's bounds.
const wakeupEngines = { wakeups: "sqlite", "wakeups-pg": "postgres" }
const wakeups = async (profile) => {
  const measured = await wakeupRows(wakeupEngines[profile], { samples: wakeupSamples, databaseUrl })
  for (const { metric, p50, p99 } of measured.rows) {
    row(profile, `${metric}: p50`, p50, Number.NaN, "ms")
    row(profile, `${metric}: p99`, p99, Number.NaN, "ms")
  }
  for (const t of measured.targets) target(t.name, t.measured, t.bound, t.met)
}

const run = (profile) =>
  scaleDatabases[profile] !== undefined
    ? scale(profile)
    : wakeupEngines[profile] !== undefined
      ? wakeups(profile)
      : measure(profile)
for (const profile of profiles) await run(profile)

if (imports.huge !== undefined) {
  const ratio = imports.huge.filedata.seconds / imports.huge.baseline.seconds
  target("huge: import time against the plain importer", `${ratio.toFixed(2)}x`, "<= 1.5x", ratio <= 1.5)
  if (imports.large !== undefined) {
    // Ten times the submissions within a quarter more memory: the import's memory does not grow with the file.
    const growth = imports.huge.filedata.rssMiB / imports.large.filedata.rssMiB
    target(
      "huge: import peak RSS against large's (bounded)",
      `${imports.huge.filedata.rssMiB.toFixed(0)} MiB, ${growth.toFixed(2)}x`,
      "<= 1.25x",
      growth <= 1.25
    )
  }
}

const format = (value) => (Number.isNaN(value) ? "-" : Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(2))
const lines = []
const print = (line) => lines.push(line)
const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).stdout.trim()
const load1 = (averages) => averages.map((value) => value.toFixed(1)).join(" ")
print(
  `filedata against the plain baseline: \`pnpm bench ${process.argv
    .slice(2)
    .map((arg) => (arg === "" ? `""` : arg))
    .join(" ")}\` on ${commit}, ` + `${new Date().toISOString().slice(0, 16)}Z`
)
print("")
print(
  `node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? "unknown CPU"}; load average (1, 5, 15 min) ` +
    `${load1(loadAtStart)} at the start, ${load1(loadavg())} at the end; ${connections} connections, ${duration} s x ` +
    `${rounds} rounds, interleaved; bench level LOG_LEVEL=${benchLevel}`
)
print("")
print("| profile | metric | filedata | baseline | unit | ratio |")
print("|---|---|---|---|---|---|")
for (const r of rows) {
  print(
    `| ${r.profile} | ${r.metric} | ${format(r.filedata)} | ${format(r.baseline)} | ${r.unit} | ${format(r.ratio)} |`
  )
}
// The note on codings and imports, when a big-reply profile ran (a scale or wake-up profile has neither row).
const bigReplyRan = profiles.some((profile) => {
  const shape = shapes[onPostgres[profile] ?? profile]
  return shape !== undefined && shape.load !== true
})
if (codings.length > 0 && bigReplyRan) {
  print("")
  print(
    `Rows ${codings.map((coding) => `"${coding}:"`).join(", ")}: filedata's reply in that coding; the baseline ` +
      "column is the baseline's uncompressed reply. Import rows: the baseline column is bench/baseline-import.mjs."
  )
}
if (against !== undefined) {
  const theirs = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: against, encoding: "utf8" }).stdout.trim()
  print("")
  print(`Rows "… / against": filedata on ${commit} against ${against} on ${theirs} in the baseline column.`)
}
if (profiles.includes("small-pg")) {
  print("")
  print(
    "Note: small-pg is filedata on PostgreSQL + Redis against the plain PostgreSQL + Redis server (bench/baseline-pg.mjs)."
  )
}
print("")
print("| target | measured | bound | met |")
print("|---|---|---|---|")
for (const t of targets) print(`| ${t.name} | ${t.measured} | ${t.bound} | ${t.met ? "yes" : "NO"} |`)
console.log(`\n${lines.join("\n")}`)
if (out !== "-") {
  mkdirSync(join(out, ".."), { recursive: true })
  writeFileSync(out, `${lines.join("\n")}\n`)
}
