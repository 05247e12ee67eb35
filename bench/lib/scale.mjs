// `pnpm bench --profiles scale[,scale-pg]`: the change feed and erasure at a million submissions (issue #42,
// docs/performance.md#change-feed-at-a-million and #erasure-at-a-million), through the real server and CLI.
//
// One file of 1,000,000 submissions (the huge profile's data, every 100th also carrying `erase: "yes"`), imported
// with the real CLI, served as `pnpm start` runs it. Then, in order:
// 1. the feed read from start to end, `limit` 10,000 a request, first after start and again warm: total time,
//    pages, the median page's time, the server's CPU and its peak RSS above the RSS just before;
// 2. `filedata append` of 10,000 submissions of the same shape to the file (`createdDate`s spread over its range),
//    then `filedata erase --where erase=yes` of the 10,000 marked ones, spread through the file by seq and by
//    `createdDate`: each a CLI process under /usr/bin/time, so both pay the same start-up;
// 3. a reader, one request at a time, of the incremental read's first page (`limit` 1,000): a few seconds alone,
//    then all through the append and all through the erasure: its p50, p99 and max in each.

import { spawn } from "node:child_process"
import { once } from "node:events"
import { createWriteStream, existsSync, rmSync } from "node:fs"
import { Agent, request as httpRequest } from "node:http"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { contentOf, random, writeFixture } from "./fixture.mjs"
import { cpuMs, resetPeak, root, start, status, stop } from "./processes.mjs"
import { percentile } from "./stats.mjs"

const SUBMISSIONS = 1_000_000
const MARKED = 10_000
const PAGE = 10_000
const shape = {
  files: 1,
  submissionsPerFile: SUBMISSIONS,
  users: 1,
  mark: { every: SUBMISSIONS / MARKED, name: "erase", value: "yes" }
}
const credentials = { fileId: "file-0", apiKey: "bench-key-0" }
// How long the reader reads alone, before the append and the erasure.
const READ_BEFORE_MS = 5000

const median = (values) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50
  )

// The append's submissions: the fixture's shape, their `createdDate`s spread evenly over the file's (about 30 s
// apart on average, so about 347 days for a million).
const writeAppend = async (path) => {
  const next = random(7)
  const out = createWriteStream(path)
  const from = Date.parse("2024-01-01T00:00:00.000Z")
  const step = Math.floor((SUBMISSIONS * 30_000) / MARKED)
  const lines = []
  for (let s = 0; s < MARKED; s++) {
    const content = { ...contentOf(next), erase: "appended" }
    lines.push(`{"createdDate":"${new Date(from + s * step).toISOString()}","content":${JSON.stringify(content)}}`)
  }
  out.end(`{"files":[{"id":"${credentials.fileId}","submissions":[${lines.join(",")}]}]}`)
  await once(out, "finish")
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

// One POST, its reply read whole: status, time to the last byte, the body.
const post = (url, path, body) =>
  new Promise((resolve, reject) => {
    const began = performance.now()
    const req = httpRequest(`${url}${path}`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json" }
    })
    req.on("error", reject)
    req.on("response", (res) => {
      const chunks = []
      res.on("data", (chunk) => chunks.push(chunk))
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        if (res.statusCode !== 200)
          return reject(new Error(`${path} answered ${res.statusCode}: ${text.slice(0, 500)}`))
        resolve({ ms: performance.now() - began, text })
      })
    })
    req.end(JSON.stringify(body))
  })

// A CLI command as a child process under /usr/bin/time, not blocking this process (the reader runs meanwhile).
const cli = async (args, env) => {
  const began = performance.now()
  const child = spawn(
    "/usr/bin/time",
    ["-f", "%e %M %U %S", process.execPath, "apps/cli/dist/bundle/main.js", ...args],
    {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const [code] = await once(child, "exit")
  const ms = performance.now() - began
  if (code !== 0) throw new Error(`filedata ${args.join(" ")} failed:\n${stdout}\n${stderr}`)
  const [seconds, kilobytes] = stderr.trim().split("\n").at(-1).split(" ").map(Number)
  return { ms, seconds, rssMiB: kilobytes / 1024, stdout, stderr }
}

// The feed from the start to its end, a page a request: every change counted, every page timed.
const readFeed = async (url, onPage) => {
  const pages = []
  let changes = 0
  let after
  for (;;) {
    const { ms, text } = await post(url, "/api/v1/file-data/changes", { ...credentials, limit: PAGE, after })
    const reply = JSON.parse(text)
    pages.push(ms)
    changes += reply.changes.length
    onPage(pages.length)
    after = reply.next
    if (!reply.hasMore) return { pages, changes }
  }
}

// Reads the first page of the incremental read, one request after another, until `done` resolves.
const readUntil = async (url, done) => {
  const latencies = []
  let finished = false
  done.then(
    () => (finished = true),
    () => (finished = true)
  )
  while (!finished) {
    latencies.push((await post(url, "/api/v1/file-data/submissions", { ...credentials, limit: 1000 })).ms)
  }
  return latencies.sort((a, b) => a - b)
}

/**
 * Runs the scale profile `profile` ("scale" on SQLite, "scale-pg" on PostgreSQL and Redis) and records its rows and
 * targets through `bench`: { work, env, database (async () => { url, drop }), row, target }.
 */
export const measureScale = async (profile, bench) => {
  const fixture = join(bench.work, "scale.json")
  const append = join(bench.work, "scale-append.json")
  if (!existsSync(fixture)) {
    console.error("generating scale fixture...")
    await writeFixture(fixture, shape)
  }
  if (!existsSync(append)) await writeAppend(append)
  const database = await bench.database()
  try {
    const imported = await cli(["import", fixture], { DATABASE_URL: database.url })
    console.error(`${profile}: imported ${SUBMISSIONS} submissions in ${imported.seconds.toFixed(1)} s`)
    const server = await start(
      profile,
      ["scripts/run.mjs", "server"],
      { ...bench.env, DATABASE_URL: database.url },
      join(bench.work, `${profile}.log`)
    )
    try {
      await feed(profile, server, bench)
      await erasure(profile, server, database, append, bench)
    } finally {
      await stop(server)
    }
  } finally {
    await database.drop()
  }
}

// One read of the whole feed: its time, pages, the server's CPU, and its peak RSS above the RSS just before, over
// the first tenth of the feed and over all of it (memory that grew with the changes read would show between them).
const feedPass = async (profile, pid, url) => {
  const idle = status(pid, "VmRSS")
  resetPeak(pid)
  const cpu = cpuMs(pid)
  const began = performance.now()
  let firstTenth = Number.NaN
  const { pages, changes } = await readFeed(url, (page) => {
    if (page === SUBMISSIONS / PAGE / 10) firstTenth = status(pid, "VmHWM") - idle
  })
  const ms = performance.now() - began
  if (changes !== SUBMISSIONS) throw new Error(`${profile}: the feed gave ${changes} changes, not ${SUBMISSIONS}`)
  return { ms, pages, cpuMs: cpuMs(pid) - cpu, aboveIdle: status(pid, "VmHWM") - idle, firstTenth }
}

// The feed read twice: first after start, as a big reply's first rows, then warm.
const feed = async (profile, server, { row, target }) => {
  const pid = server.child.pid
  const first = await feedPass(profile, pid, server.url)
  const warm = await feedPass(profile, pid, server.url)
  const page = median(first.pages)
  console.error(
    `${profile}: feed of ${SUBMISSIONS} changes in ${first.pages.length} pages, ${(first.ms / 1000).toFixed(1)} s, ` +
      `median page ${page.toFixed(0)} ms, ${first.aboveIdle.toFixed(1)} MiB above idle (warm: ` +
      `${(warm.ms / 1000).toFixed(1)} s, ${warm.aboveIdle.toFixed(1)} MiB)`
  )
  row(
    profile,
    `feed of ${SUBMISSIONS} changes, limit ${PAGE}, first after start: time to the end`,
    first.ms / 1000,
    Number.NaN,
    "s"
  )
  row(profile, "feed: pages read", first.pages.length, Number.NaN, "pages")
  row(profile, `feed: median page (${PAGE} changes)`, page, Number.NaN, "ms")
  row(profile, "feed: server CPU", first.cpuMs, Number.NaN, "ms")
  for (const [label, pass] of [
    ["first after start", first],
    ["warm", warm]
  ]) {
    row(
      profile,
      `feed, ${label}: peak RSS above idle (baseline: over the first ${SUBMISSIONS / 10} changes)`,
      pass.aboveIdle,
      pass.firstTenth,
      "MiB"
    )
    target(
      `${profile}: feed of 1M changes, ${label}: peak RSS above idle, as a big reply's (first tenth's in brackets)`,
      `${pass.aboveIdle.toFixed(1)} MiB (${pass.firstTenth.toFixed(1)})`,
      "<= 32 MiB",
      pass.aboveIdle <= 32
    )
  }
  row(profile, "feed, warm: time to the end", warm.ms / 1000, Number.NaN, "s")
  server.pageMs = page
}

// A CLI command run while the reader reads: the command's figures and the reads made meanwhile.
const whileReading = async (url, args, env) => {
  const run = cli(args, env)
  const reads = await readUntil(url, run)
  return { ...(await run), reads }
}

const erasure = async (profile, server, database, append, { row, target }) => {
  const env = { DATABASE_URL: database.url }
  // The reader alone first, then through the append and through the erasure, so both commands share the CPU with
  // it alike and the append's reads show what any write of that size costs the reader on this machine.
  const before = await readUntil(server.url, sleep(READ_BEFORE_MS))
  const added = await whileReading(server.url, ["append", append], env)
  const removed = await whileReading(server.url, ["erase", "--file", credentials.fileId, "--where", "erase=yes"], env)
  const count = /erased ([\d,]+) submissions/.exec(removed.stdout)?.[1]
  if (count !== String(MARKED)) throw new Error(`${profile}: erase said ${removed.stdout.slice(0, 200)}`)
  // The SQLite checkpoint after the commit gives up with this warning while readers hold the WAL.
  const heldUp = removed.stderr.includes("may stay in the database's WAL")
  const figures = (reads) => `p99 ${percentile(reads, 99).toFixed(1)} ms, max ${reads.at(-1).toFixed(1)} ms`
  console.error(
    `${profile}: append of ${MARKED} ${added.seconds.toFixed(2)} s, erase of ${MARKED} ${removed.seconds.toFixed(2)} s` +
      `${heldUp ? " (checkpoint fell short)" : ""}; reader ${figures(before)} before, ${figures(added.reads)} ` +
      `during the append, ${figures(removed.reads)} during the erase`
  )
  const ratio = removed.seconds / added.seconds
  row(
    profile,
    `erase --where of ${MARKED} spread through the file (baseline: append of ${MARKED})`,
    removed.seconds,
    added.seconds,
    "s"
  )
  row(profile, "erase: CLI peak RSS (baseline: the append's)", removed.rssMiB, added.rssMiB, "MiB")
  target(`${profile}: erase of ${MARKED} by --where against their append`, `${ratio.toFixed(2)}x`, "<= 2x", ratio <= 2)
  for (const [name, p] of [
    ["p50", 50],
    ["p99", 99],
    ["max", 100]
  ]) {
    row(profile, `reader ${name} before any write`, percentile(before, p), Number.NaN, "ms")
    row(
      profile,
      `reader ${name} during the erase (baseline: during the append)`,
      percentile(removed.reads, p),
      percentile(added.reads, p),
      "ms"
    )
  }
  // What the erasure holds a read up by, beyond what the append of as many submissions does on the same machine
  // at the same time; one feed page of 10,000 changes is the unit.
  const delay = removed.reads.at(-1) - added.reads.at(-1)
  target(
    `${profile}: longest read during the erase, above the longest during the append`,
    `${delay.toFixed(0)} ms (a page: ${server.pageMs.toFixed(0)} ms)${heldUp ? ", checkpoint fell short" : ""}`,
    "<= one feed page",
    delay <= server.pageMs && !heldUp
  )
}

// SQLite: a file of its own under the bench's work directory.
export const sqliteDatabase = (work) => async () => {
  const path = join(work, "scale.db")
  const remove = () => {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${path}${suffix}`, { force: true })
  }
  remove()
  return { url: `file:${path}`, drop: async () => remove() }
}
