// `pnpm bench`: seeded datasets, imported with the real CLI, served by the real server and by the raw
// baseline (bench/baseline.mjs), measured interleaved so machine drift hits both alike.
// Options: --profiles small,large,huge  --duration 10  --connections 50  --rounds 2  --warmup 5 (seconds)
// --codings gzip,br: the content codings the big replies of large and huge are also measured in ("" for none).
// small-pg: the small dataset served by filedata on PostgreSQL and Redis (BENCH_DATABASE_URL or TEST_DATABASE_URL,
// BENCH_REDIS_URL or TEST_REDIS_URL; a fresh database is created and dropped), against the same SQLite baseline.
// It joins the default profiles when both URLs are set.

import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { createRequire } from "node:module"
import { join } from "node:path"
import { createBrotliDecompress, createGunzip } from "node:zlib"
import autocannon from "autocannon"
import { writeFixture } from "./lib/fixture.mjs"
import { build, root, start, status, stop } from "./lib/processes.mjs"

const work = join(root, ".bench")
const option = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`)
  return index === -1 ? fallback : process.argv[index + 1]
}
const databaseUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined
const redisUrl = process.env.BENCH_REDIS_URL || process.env.TEST_REDIS_URL || undefined
const profiles = option("profiles", databaseUrl && redisUrl ? "small,large,huge,small-pg" : "small,large,huge").split(
  ","
)
const duration = Number(option("duration", "10"))
const connections = Number(option("connections", "50"))
const rounds = Number(option("rounds", "2"))
const warmup = Number(option("warmup", "5"))

const shapes = {
  small: { files: 1000, submissionsPerFile: 20, users: 100, load: true },
  large: { files: 1, submissionsPerFile: 100_000, users: 1 },
  huge: { files: 1, submissionsPerFile: 1_000_000, users: 1 }
}
// Profiles served from PostgreSQL and Redis: the dataset of another profile, whose fixture and SQLite baseline
// they share.
const onPostgres = { "small-pg": "small" }
const notes = {
  "small-pg": "small-pg: filedata on PostgreSQL + Redis against the same raw SQLite baseline as small"
}

// The `pg` driver the PostgreSQL adapter uses, reached through that package (the root does not depend on it).
const pgClient = (connectionString) => {
  const fromPostgres = createRequire(join(root, "packages/postgres/package.json"))
  const pg = createRequire(fromPostgres.resolve("@effect/sql-pg/package.json"))("pg")
  return new pg.Client({ connectionString })
}
const admin = async (statement) => {
  const client = pgClient(databaseUrl)
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

// Runs a command under /usr/bin/time for its wall time and peak RSS.
const timed = (args, env) => {
  const result = spawnSync("/usr/bin/time", ["-f", "%e %M", process.execPath, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: "utf8"
  })
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed:\n${result.stdout}\n${result.stderr}`)
  const [seconds, kilobytes] = result.stderr.trim().split("\n").at(-1).split(" ").map(Number)
  return { seconds, rssMiB: kilobytes / 1024 }
}

// Writing 5 to clear_refs resets the peak RSS, so each scenario reports its own peak.
const resetPeak = (pid) => writeFileSync(`/proc/${pid}/clear_refs`, "5")

const load = (server, bodies, seconds = duration) =>
  new Promise((resolve, reject) => {
    let i = 0
    autocannon(
      {
        url: `${server.url}/api/v1/file-data`,
        connections,
        duration: seconds,
        requests: [
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            setupRequest: (request) => ({ ...request, body: bodies[i++ % bodies.length] })
          }
        ]
      },
      (error, result) => (error ? reject(error) : resolve(result))
    )
  })

const download = async (server, body) => {
  const began = performance.now()
  // fetch asks for gzip unless told otherwise: these rows measure the uncompressed reply.
  const response = await fetch(`${server.url}/api/v1/file-data`, {
    method: "POST",
    headers: { "content-type": "application/json", "accept-encoding": "identity" },
    body
  })
  let bytes = 0
  for await (const chunk of response.body) bytes += chunk.length
  if (response.status !== 200) throw new Error(`${server.name} answered ${response.status}`)
  return { ms: performance.now() - began, bytes }
}

// The reply as sent, over node:http (fetch would decode it): bytes on the wire, time to the last byte; with
// `decoded`, also the length once decoded, to check the compressed reply against the identity one.
const downloadRaw = (server, body, encoding, decoded = false) =>
  new Promise((resolve, reject) => {
    const began = performance.now()
    const req = httpRequest(`${server.url}/api/v1/file-data`, {
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

// The process's CPU time (user + system, every thread: zlib works on libuv's pool) in milliseconds.
const ticksPerSecond = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond
}

// One reply, or `parallel` at once, in `encoding`, on a server warmed by one reply before: time to the last
// byte, bytes on the wire of one reply, the server's CPU time, and its peak RSS above idle.
const replies = async (server, body, encoding, parallel) => {
  await downloadRaw(server, body, encoding)
  const idle = status(server.child.pid, "VmRSS")
  resetPeak(server.child.pid)
  const cpu = cpuMs(server.child.pid)
  const began = performance.now()
  const done = await Promise.all(Array.from({ length: parallel }, () => downloadRaw(server, body, encoding)))
  return {
    ms: performance.now() - began,
    bytes: done[0].bytes,
    cpuMs: cpuMs(server.child.pid) - cpu,
    aboveIdle: status(server.child.pid, "VmHWM") - idle
  }
}

// The codings `pnpm bench` measures filedata's big replies in, beside identity.
const codings = option("codings", "gzip,br")
  .split(",")
  .filter((coding) => coding !== "")

const rows = []
const row = (profile, metric, server, baseline, unit, better) =>
  rows.push({ profile, metric, filedata: server, baseline, unit, ratio: baseline ? server / baseline : NaN, better })

mkdirSync(work, { recursive: true })
build()

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
  rmSync(db, { force: true })
  rmSync(`${db}-wal`, { force: true })
  rmSync(`${db}-shm`, { force: true })
  let serverUrl = `file:${db}`
  let pgDatabase
  if (onPostgres[profile] !== undefined) {
    // The baseline reads SQLite: the fixture goes there too, untimed, and filedata gets a fresh database.
    timed(["apps/cli/dist/main.js", "import", fixture], { DATABASE_URL: serverUrl, LOG_LEVEL: "warn" })
    pgDatabase = `filedata_bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`
    await admin(`CREATE DATABASE ${pgDatabase}`)
    const url = new URL(databaseUrl)
    url.pathname = `/${pgDatabase}`
    serverUrl = url.toString()
  }
  try {
    await serve(profile, shape, db, serverUrl, fixture)
  } finally {
    if (pgDatabase !== undefined) await admin(`DROP DATABASE IF EXISTS ${pgDatabase} WITH (FORCE)`)
  }
}

const serve = async (profile, shape, db, serverUrl, fixture) => {
  const imported = timed(["apps/cli/dist/main.js", "import", fixture], { DATABASE_URL: serverUrl, LOG_LEVEL: "warn" })
  console.error(`${profile}: imported in ${imported.seconds.toFixed(1)} s, peak RSS ${imported.rssMiB.toFixed(0)} MiB`)
  row(profile, "import time", imported.seconds, NaN, "s")
  row(profile, "import peak RSS", imported.rssMiB, NaN, "MiB")

  const env = {
    DATABASE_URL: serverUrl,
    ...(onPostgres[profile] === undefined ? {} : { REDIS_URL: redisUrl }),
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
    RATE_LIMIT_MAX: "1000000000",
    RATE_LIMIT_IP_MAX: "1000000000"
  }
  const servers = [
    // What `pnpm start` runs (the build check included), so start-up is measured as the contract starts it.
    await start("filedata", ["scripts/run.mjs", "server"], env, join(work, `${profile}-filedata.log`)),
    await start("baseline", ["bench/baseline.mjs", db, "0"], {})
  ]
  row(profile, "start-up to listening", servers[0].startupMs, servers[1].startupMs, "ms", "lower")

  if (shape.load) {
    const bodies = Array.from({ length: shape.files }, (_, f) =>
      JSON.stringify({ fileId: `file-${f}`, apiKey: `bench-key-${f % shape.users}` })
    )
    // Both servers get the same load unmeasured first, so the rounds compare code the JIT has compiled,
    // not the first seconds of a cold start (which cost filedata, with more code to compile, far more).
    for (const server of servers) if (warmup > 0) await load(server, bodies, warmup)
    const results = { filedata: [], baseline: [] }
    for (let round = 0; round < rounds; round++) {
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        resetPeak(server.child.pid)
        const result = await load(server, bodies)
        if (result.non2xx > 0 || result.errors > 0)
          throw new Error(`${server.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
        results[server.name].push({ ...result, peak: status(server.child.pid, "VmHWM") })
        console.error(
          `${profile} round ${round + 1} ${server.name}: ${result.requests.average} req/s, p99 ${result.latency.p99} ms`
        )
      }
    }
    const mean = (list, pick) => list.reduce((sum, item) => sum + pick(item), 0) / list.length
    // The rounds' own ratios show how far machine drift moves the figure the table averages.
    const perRound = results.filedata.map((r, i) =>
      (r.requests.average / results.baseline[i].requests.average).toFixed(2)
    )
    console.error(`${profile} requests/s ratio per round: ${perRound.join(", ")}`)
    row(
      profile,
      "requests/s",
      mean(results.filedata, (r) => r.requests.average),
      mean(results.baseline, (r) => r.requests.average),
      "req/s",
      "higher"
    )
    row(
      profile,
      "p50 latency",
      mean(results.filedata, (r) => r.latency.p50),
      mean(results.baseline, (r) => r.latency.p50),
      "ms",
      "lower"
    )
    row(
      profile,
      "p99 latency",
      mean(results.filedata, (r) => r.latency.p99),
      mean(results.baseline, (r) => r.latency.p99),
      "ms",
      "lower"
    )
    row(
      profile,
      "peak RSS under load",
      mean(results.filedata, (r) => r.peak),
      mean(results.baseline, (r) => r.peak),
      "MiB",
      "lower"
    )
  } else {
    const body = JSON.stringify({ fileId: "file-0", apiKey: "bench-key-0" })
    // The first reply after start, above the idle server as it started: what the first client meets, with the
    // heap at its start-up size and the code not compiled yet. The rows below measure a warmed server.
    const first = {}
    for (const server of servers) {
      const idle = status(server.child.pid, "VmRSS")
      resetPeak(server.child.pid)
      const reply = await download(server, body)
      first[server.name] = { ms: reply.ms, aboveIdle: status(server.child.pid, "VmHWM") - idle }
    }
    row(profile, "time to last byte, first reply after start", first.filedata.ms, first.baseline.ms, "ms", "lower")
    row(
      profile,
      "peak RSS above idle, first reply after start",
      first.filedata.aboveIdle,
      first.baseline.aboveIdle,
      "MiB",
      "lower"
    )
    for (const parallel of [1, 4]) {
      const measured = {}
      for (const server of parallel === 1 ? servers : [...servers].reverse()) {
        await download(server, body) // warm the page cache and the code paths
        const idle = status(server.child.pid, "VmRSS")
        resetPeak(server.child.pid)
        const began = performance.now()
        const replies = await Promise.all(Array.from({ length: parallel }, () => download(server, body)))
        measured[server.name] = {
          ms: performance.now() - began,
          bytes: replies[0].bytes,
          aboveIdle: status(server.child.pid, "VmHWM") - idle
        }
      }
      if (measured.filedata.bytes !== measured.baseline.bytes) {
        throw new Error(`reply sizes differ: ${measured.filedata.bytes} vs ${measured.baseline.bytes}`)
      }
      row(
        profile,
        parallel === 1 ? "time to last byte, 1 reply" : `time to last byte, ${parallel} in parallel`,
        measured.filedata.ms,
        measured.baseline.ms,
        "ms",
        "lower"
      )
      row(
        profile,
        parallel === 1 ? "peak RSS above idle, 1 reply" : `peak RSS above idle, ${parallel} in parallel`,
        measured.filedata.aboveIdle,
        measured.baseline.aboveIdle,
        "MiB",
        "lower"
      )
    }
    // Compressed replies (Accept-Encoding), against the same replies uncompressed: filedata's own and the
    // baseline's, which never compresses. Server CPU covers zlib's threads too.
    const [filedata, baseline] = servers
    const identity = await downloadRaw(filedata, body, "identity")
    for (const coding of codings) {
      const checked = await downloadRaw(filedata, body, coding, true)
      if (checked.plain !== identity.bytes) {
        throw new Error(`${coding} reply decodes to ${checked.plain} bytes, identity is ${identity.bytes}`)
      }
    }
    for (const parallel of [1, 4]) {
      const label = parallel === 1 ? "1 reply" : `${parallel} in parallel`
      const reference = await replies(baseline, body, "identity", parallel)
      for (const coding of ["identity", ...codings]) {
        const measured = await replies(filedata, body, coding, parallel)
        const name = `${coding}:`
        row(profile, `${name} time to last byte, ${label}`, measured.ms, reference.ms, "ms", "lower")
        row(profile, `${name} server CPU, ${label}`, measured.cpuMs, reference.cpuMs, "ms", "lower")
        if (parallel === 1)
          row(profile, `${name} bytes on the wire`, measured.bytes / 1048576, reference.bytes / 1048576, "MiB", "lower")
        row(profile, `${name} peak RSS above idle, ${label}`, measured.aboveIdle, reference.aboveIdle, "MiB", "lower")
      }
    }
  }
  await Promise.all(servers.map(stop))
}

for (const profile of profiles) await measure(profile)

const format = (value) => (Number.isNaN(value) ? "-" : value >= 100 ? value.toFixed(0) : value.toFixed(2))
console.log(
  `\nfiledata vs raw baseline (node ${process.version}, ${connections} connections, ${duration} s x ${rounds} rounds)\n`
)
console.log("| profile | metric | filedata | baseline | unit | ratio |")
console.log("|---|---|---|---|---|---|")
for (const r of rows) {
  console.log(
    `| ${r.profile} | ${r.metric} | ${format(r.filedata)} | ${format(r.baseline)} | ${r.unit} | ${format(r.ratio)} |`
  )
}
if (codings.length > 0 && profiles.some((profile) => shapes[profile]?.load !== true)) {
  console.log(
    `\nRows "identity:", ${codings.map((coding) => `"${coding}:"`).join(", ")}: filedata's reply asked for in that coding; ` +
      "the baseline column is always the baseline's uncompressed reply."
  )
}
const printed = profiles.filter((profile) => notes[profile] !== undefined)
if (printed.length > 0) console.log(`\n${printed.map((profile) => `Note: ${notes[profile]}.`).join("\n")}`)
