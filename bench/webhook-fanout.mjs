// `node bench/webhook-fanout.mjs`: the issue's delivery goal end to end. The built server (SQLite) delivers to
// --webhooks webhooks, one per file, one of them at a receiver that never answers; another process appends
// --submissions submissions, one per append, round robin over the files, as fast as it commits. Each submission
// of a webhook that answers must reach its receiver within 2 s of its append's commit (the contract's "first
// attempt within 2 s"). Reports append-to-arrival latency (p50, p99, max), how many arrived late or never, and
// the appends' own rate. Options: --webhooks 100  --submissions 1000  --hanging 1  --rate 0 (appends a second;
// 0: back to back, as fast as one writer commits)
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { bundleScript } from "./lib/bundle.mjs"
import { commandLine } from "./lib/options.mjs"
import { build, root, start, stop } from "./lib/processes.mjs"

const option = commandLine(import.meta.url, ["hanging", "rate", "submissions", "webhooks"])
const webhooks = Number(option("webhooks", "100"))
const submissions = Number(option("submissions", "1000"))
const hanging = Number(option("hanging", "1"))
// Appends a second (0: as fast as one writer commits).
const perSecond = Number(option("rate", "0"))
const boundMillis = 2_000

build()
const work = join(root, ".bench", "webhook-fanout")
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })
const filename = join(work, "fanout.db")
const apiKey = "fanout-bench-key"
const files = Array.from({ length: webhooks }, (_, i) => `fanout-${i}`)
writeFileSync(
  join(work, "fixture.json"),
  JSON.stringify({
    users: [{ id: "owner", apiKeys: [apiKey] }],
    files: files.map((id) => ({ id, userId: "owner", name: id, creationDate: "2024-01-01T00:00:00.000Z" }))
  })
)
const env = {
  DATABASE_URL: `file:${filename}`,
  PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "error",
  // One key creates every webhook.
  RATE_LIMIT_MAX: "100000",
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString("base64")
}
const imported = spawnSync(process.execPath, ["scripts/run.mjs", "cli", "import", join(work, "fixture.json")], {
  cwd: root,
  env: { ...process.env, ...env },
  encoding: "utf8"
})
if (imported.status !== 0) throw new Error(imported.stderr)

const appender = join(work, "appender.mjs")
await bundleScript("bench/lib/fanout-appender.mjs", appender, {
  nodePaths: ["packages/sqlite/node_modules"],
  external: ["better-sqlite3"]
})

const lines = (child) => createInterface({ input: child.stdout })[Symbol.asyncIterator]()
const receiver = spawn(process.execPath, [join(root, "bench/lib/fanout-receiver.mjs")], {
  stdio: ["ignore", "pipe", "inherit"]
})
const received = lines(receiver)
const port = Number((await received.next()).value)
const arrivals = new Map()
const arrivalsDone = (async () => {
  for await (const line of { [Symbol.asyncIterator]: () => received }) {
    const [n, at] = line.split(" ")
    if (!arrivals.has(Number(n))) arrivals.set(Number(n), Number(at))
  }
})()

const server = await start("filedata", ["scripts/run.mjs", "server"], env)
try {
  for (const [i, fileId] of files.entries()) {
    const url = `http://127.0.0.1:${port}/${i < hanging ? "hang" : `hook/${i}`}`
    const response = await fetch(`${server.url}/api/v1/webhooks/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiKey, fileId, url })
    })
    if (response.status !== 201) throw new Error(`create: ${response.status} ${await response.text()}`)
  }

  const child = spawn(
    process.execPath,
    [appender, JSON.stringify({ filename, files, count: submissions, perSecond })],
    { cwd: join(root, "packages/sqlite"), stdio: ["ignore", "pipe", "inherit"] }
  )
  const committed = new Map()
  for await (const line of { [Symbol.asyncIterator]: () => lines(child) }) {
    const [n, at] = line.split(" ")
    committed.set(Number(n), Number(at))
  }
  const appendMillis = Math.max(...committed.values()) - Math.min(...committed.values())

  // Every submission of an answering webhook, or 2 s past the last commit.
  const expected = [...committed.keys()].filter((n) => n % webhooks >= hanging)
  const lastCommit = Math.max(...committed.values())
  while (expected.some((n) => !arrivals.has(n)) && Date.now() < lastCommit + boundMillis + 1_000) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const latencies = expected.filter((n) => arrivals.has(n)).map((n) => arrivals.get(n) - committed.get(n))
  latencies.sort((a, b) => a - b)
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
  const late = latencies.filter((ms) => ms > boundMillis).length
  const never = expected.length - latencies.length
  const load = spawnSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).stdout.split(" ").slice(0, 3).join(" ")
  console.table([
    {
      webhooks,
      hanging,
      submissions,
      "appends/s": Math.round((submissions / Math.max(1, appendMillis)) * 1000),
      "p50 ms": at(0.5),
      "p99 ms": at(0.99),
      "max ms": latencies.at(-1),
      "over 2 s": late,
      "never arrived": never
    }
  ])
  console.log(`load average ${load}; ${late + never === 0 ? "met" : "MISSED"}: every submission within 2 s`)
} finally {
  await stop(server)
  receiver.kill()
  await arrivalsDone.catch(() => undefined)
}
