// `node bench/long-poll.mjs`: what waiting requests (`wait` on the incremental read) cost one instance. The built
// server on SQLite, loopback only: --requests waiting requests (default 10,000) spread over --files files, each
// with `wait: 30` past the end of its file. Reports the server's RSS above idle once all of them wait (goal: under
// 200 MiB), then appends to one file with the CLI (another process) and reports how long its waiters took to be
// answered, how many others were answered (none should be) and the server's CPU time for that wake-up; then sends
// SIGTERM and reports how long until every waiting request was answered. Exits non-zero when the RSS goal, the
// 1 s answer or the isolation of the wake-up is missed.
// Options: --requests 10000  --files 1000
import { spawnSync } from "node:child_process"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { Agent, request as httpRequest } from "node:http"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { commandLine } from "./lib/options.mjs"
import { build, cpuMs, root, start, status, stop } from "./lib/processes.mjs"

const option = commandLine(import.meta.url, ["files", "requests"])
const requests = Number(option("requests", "10000"))
const fileCount = Number(option("files", "1000"))
const goalMiB = 200

const work = join(root, ".bench", "long-poll")
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })
const db = join(work, "filedata.db")
const key = "bench-long-poll-key"
const fileIds = Array.from({ length: fileCount }, (_, i) => `file-${i}`)

build()
const cli = (args) => {
  const result = spawnSync(process.execPath, ["apps/cli/dist/bundle/main.js", ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: `file:${db}`, LOG_LEVEL: "warn" },
    encoding: "utf8"
  })
  if (result.status !== 0) throw new Error(`filedata ${args.join(" ")}: ${result.stderr}`)
}
const fixture = join(work, "fixture.json")
writeFileSync(
  fixture,
  JSON.stringify({
    users: [{ id: "bench", apiKeys: [key] }],
    files: fileIds.map((id) => ({
      id,
      userId: "bench",
      name: id,
      creationDate: "2024-01-01T00:00:00.000Z",
      submissions: [{ createdDate: "2024-01-02T00:00:00.000Z", content: { n: "0" } }]
    }))
  })
)
cli(["import", fixture])

const server = await start(
  "filedata",
  ["apps/server/dist/bundle/main.js"],
  {
    DATABASE_URL: `file:${db}`,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    RATE_LIMIT_MAX: "1000000000",
    RATE_LIMIT_IP_MAX: "1000000000",
    HTTP_MAX_CONNECTIONS: String(requests + 100),
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(requests + 100),
    LONG_POLL_MAX_PER_KEY: String(requests),
    LONG_POLL_MAX_PER_ADDRESS: String(requests)
  },
  join(work, "server.log")
)
const { pid } = server.child

// One socket per waiting request, as clients that each hold one would.
const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY })
const post = (body) =>
  new Promise((resolve, reject) => {
    const text = JSON.stringify(body)
    const req = httpRequest(
      `${server.url}/api/v1/file-data/submissions`,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) }
      },
      (res) => {
        const chunks = []
        res.on("data", (chunk) => chunks.push(chunk))
        res.on("end", () => resolve({ status: res.statusCode, json: JSON.parse(Buffer.concat(chunks).toString()) }))
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(text)
  })

// Each file's cursor at its end, which is also the idle server's warm-up.
const afters = new Map()
for (const fileId of fileIds) afters.set(fileId, (await post({ fileId, apiKey: key })).json.next)
await sleep(1000)
const idle = status(pid, "VmRSS")

const waiting = []
let answered = 0
for (let i = 0; i < requests; i++) {
  const fileId = fileIds[i % fileCount]
  const reply = post({ fileId, apiKey: key, after: afters.get(fileId), wait: 30 }).then((value) => {
    answered++
    return { ...value, at: performance.now() }
  })
  waiting.push({ fileId, reply })
  // Opened in batches, so the accept queue never overflows.
  if (i % 500 === 499) await sleep(50)
}
// Waiting once the server's memory settles: nothing answers them before 30 s.
let rss = status(pid, "VmRSS")
for (let settled = 0; settled < 3; ) {
  await sleep(500)
  const now = status(pid, "VmRSS")
  settled = Math.abs(now - rss) < 1 ? settled + 1 : 0
  rss = now
}
const held = rss - idle
console.log(
  `${requests} waiting requests on ${fileCount} files: RSS ${idle.toFixed(1)} MiB idle, ${rss.toFixed(1)} MiB waiting`
)
console.log(
  `  above idle: ${held.toFixed(1)} MiB, ${((held * 1024 * 1024) / requests / 1024).toFixed(1)} KiB a request (goal: under ${goalMiB} MiB)`
)
if (answered !== 0) throw new Error(`${answered} requests were answered before anything was appended`)

// A wake-up for one file: its waiters are answered, no other is, and it costs the server little CPU.
const target = fileIds[0]
const appendFile = join(work, "append.json")
writeFileSync(
  appendFile,
  JSON.stringify({
    files: [{ id: target, submissions: [{ createdDate: "2024-03-01T00:00:00.000Z", content: { n: "1" } }] }]
  })
)
const targets = waiting.filter((entry) => entry.fileId === target)
const cpuBefore = cpuMs(pid)
cli(["append", appendFile])
const appended = performance.now()
const replies = await Promise.all(targets.map((entry) => entry.reply))
const slowest = Math.max(...replies.map((reply) => reply.at - appended))
const woken = replies.filter((reply) => reply.json.submissions.length === 1).length
await sleep(1000)
const cpuWake = cpuMs(pid) - cpuBefore
const others = answered - targets.length
console.log(
  `wake-up of one file: its ${targets.length} waiters answered within ${Math.max(0, slowest).toFixed(0)} ms of the CLI's exit` +
    ` (${woken} with the new submission); ${others} other requests answered; server CPU ${cpuWake.toFixed(0)} ms over the append and the second after`
)

// SIGTERM answers every waiting request at once, then the server drains and exits.
const stopping = performance.now()
const exited = stop(server)
const rest = await Promise.all(waiting.filter((entry) => entry.fileId !== target).map((entry) => entry.reply))
const lastAnswer = Math.max(...rest.map((reply) => reply.at)) - stopping
const code = await exited
console.log(
  `SIGTERM: the other ${rest.length} answered within ${lastAnswer.toFixed(0)} ms (${rest.filter((reply) => reply.status === 200 && reply.json.submissions.length === 0).length} empty pages), exit ${code} after ${(performance.now() - stopping).toFixed(0)} ms`
)
agent.destroy()

const missed = [
  held >= goalMiB && `RSS above idle ${held.toFixed(1)} MiB >= ${goalMiB} MiB`,
  slowest > 1000 && `the woken file's requests took ${slowest.toFixed(0)} ms`,
  woken !== targets.length && `${targets.length - woken} waiters of the file missed the append`,
  others !== 0 && `${others} waiters of other files were answered by the wake-up`,
  code !== 0 && `the server exited ${code}`
].filter(Boolean)
for (const line of missed) console.error(`MISSED: ${line}`)
process.exit(missed.length === 0 ? 0 : 1)
