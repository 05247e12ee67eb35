// Where a request's CPU goes, filedata's hot route beside the baseline, under the small profile's load
// (docs/performance.md#where-a-requests-time-goes): each server sampled with Linux `perf` while it serves, user
// space of every thread, with /proc's user and kernel time over the same window; per request, by owner (the
// package of the nearest JavaScript frame, so native, builtin and SQLite time counts for the code that asked for
// it), by kind of code, inclusive by package, and by function.
// Options: --duration 10 (seconds sampled)  --warmup 5  --connections 32  --levels warn,info (filedata's
// LOG_LEVELs)  --top 30 (functions listed)  --frequency 4000 (samples a second). Needs `perf` and the small
// dataset (imported into .bench/profile-small.db when missing). `--cpuprofile` also writes V8 profiles
// (`--cpu-prof`, whole process life) into .bench/profiles/ for a flame chart in DevTools or speedscope; they
// sample by wall time, so on a shared machine their absolute figures include time spent waiting for a core.

import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { bodiesOf, load } from "./lib/load.mjs"
import { commandLine } from "./lib/options.mjs"
import { account, nodeOptions, record, removeMap } from "./lib/perf.mjs"
import { build, cpuSplit, profileDatabase, profileEnv, root, smallShape, start, stop } from "./lib/processes.mjs"

const option = commandLine(
  import.meta.url,
  ["connections", "duration", "frequency", "levels", "top", "warmup"],
  ["cpuprofile"]
)
const seconds = Number(option("duration", "10"))
const warmup = Number(option("warmup", "5"))
const connections = Number(option("connections", "32"))
const levels = option("levels", "warn,info").split(",")
const top = Number(option("top", "30"))
const frequency = Number(option("frequency", "4000"))
const v8Profiles = process.argv.includes("--cpuprofile")

const work = join(root, ".bench")
const profiles = join(work, "profiles")
mkdirSync(profiles, { recursive: true })
build()

const db = await profileDatabase()

const env = profileEnv(db)
const flags = (name) => [
  ...nodeOptions,
  ...(v8Profiles ? ["--cpu-prof", "--cpu-prof-dir", profiles, "--cpu-prof-name", `${name}.cpuprofile`] : [])
]
const kinds = [
  ...levels.map((level) => ({
    name: `filedata @${level}`,
    args: [...flags(`filedata-${level}`), "scripts/run.mjs", "server"],
    env: { LOG_LEVEL: level },
    output: join(work, `profile-${level}.log`)
  })),
  { name: "baseline", args: [...flags("baseline"), "bench/baseline.mjs", db, "0"], env: {} }
]

const bodies = bodiesOf(smallShape)
const measured = []
for (const kind of kinds) {
  const out = join(profiles, `${kind.name.replace(/\W+/g, "-")}.perf.data`)
  const server = await start(kind.name, kind.args, { ...env, ...kind.env }, kind.output)
  const pid = server.child.pid
  if (warmup > 0) await load(server.url, bodies, { seconds: warmup, connections })
  const perf = record(pid, out, frequency)
  await sleep(200)
  const before = cpuSplit(pid)
  const result = await load(server.url, bodies, { seconds, connections })
  const after = cpuSplit(pid)
  await perf.stop()
  await stop(server)
  const { main, others } = await account(out, pid)
  removeMap(pid)
  const requests = result.requests.total
  measured.push({
    ...kind,
    requests,
    rps: result.requests.average,
    user: ((after.user - before.user) * 1000) / requests,
    system: ((after.system - before.system) * 1000) / requests,
    main,
    others
  })
  console.error(`${kind.name}: ${result.requests.average} req/s, ${out}`)
}

const f1 = (value) => value.toFixed(1)
const per = (m, micros) => micros / m.requests
const [first] = measured
const baseline = measured.at(-1)
const header = (label) => {
  console.log(`| ${label} | ${measured.map((m) => m.name).join(" | ")} | ${first.name} - baseline |`)
  console.log(`|---|${measured.map(() => "---:").join("|")}|---:|`)
}
const table = (label, pick) => {
  header(label)
  const keys = [...new Set(measured.flatMap((m) => [...pick(m).keys()]))]
  const of = (m, key) => per(m, pick(m).get(key) ?? 0)
  keys.sort((a, b) => of(first, b) - of(baseline, b) - (of(first, a) - of(baseline, a)))
  for (const key of keys) {
    const values = measured.map((m) => of(m, key))
    if (values.every((value) => value < 0.3)) continue
    console.log(`| ${key} | ${values.map(f1).join(" | ")} | ${f1(of(first, key) - of(baseline, key))} |`)
  }
}

console.log(
  `\nCPU a request (µs), small profile, ${connections} connections, ${seconds} s sampled at ${frequency} Hz\n`
)
header("")
const line = (label, pick) => {
  const values = measured.map(pick)
  console.log(`| ${label} | ${values.map(f1).join(" | ")} | ${f1(values[0] - values.at(-1))} |`)
}
line("requests/s", (m) => m.rps)
line("user time (/proc)", (m) => m.user)
line("kernel time (/proc)", (m) => m.system)
line("sampled, main thread", (m) => per(m, m.main.total))
line("sampled, other threads (GC helpers, compilers, libuv pool)", (m) => per(m, m.others.total))

console.log("\nMain thread by owner: the package of the nearest JavaScript frame (µs a request)\n")
table("owner", (m) => m.main.owners)
console.log("\nMain thread by kind of code at the leaf (µs a request)\n")
table("kind", (m) => m.main.kinds)
console.log("\nMain thread inclusive by package: samples with the package anywhere on the stack (µs a request)\n")
table("package on the stack", (m) => m.main.inclusive)
for (const m of measured) {
  console.log(`\n${m.name}: owners by kind of code (µs a request)\n`)
  const byOwner = new Map()
  for (const [key, micros] of m.main.ownerKinds) {
    const [owner, kind] = key.split("\t")
    const kinds = byOwner.get(owner) ?? new Map()
    kinds.set(kind, micros)
    byOwner.set(owner, kinds)
  }
  const owners = [...byOwner].sort((a, b) => (m.main.owners.get(b[0]) ?? 0) - (m.main.owners.get(a[0]) ?? 0))
  for (const [owner, kinds] of owners.slice(0, 12)) {
    const parts = [...kinds]
      .sort((a, b) => b[1] - a[1])
      .filter(([, micros]) => per(m, micros) >= 0.2)
      .map(([kind, micros]) => `${kind} ${f1(per(m, micros))}`)
    console.log(`- ${owner} ${f1(per(m, m.main.owners.get(owner)))}: ${parts.join(", ")}`)
  }
  for (const [label, map] of [
    ["nearest function of its own code on the stack (self time of everything it called)", m.main.ownNearest],
    ["functions of its own code, inclusive", m.main.ownInclusive]
  ]) {
    console.log(`\n${m.name}: ${label} (µs a request)\n`)
    console.log("| µs | function |")
    console.log("|---:|---|")
    for (const [name, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      if (per(m, micros) >= 0.2) console.log(`| ${f1(per(m, micros))} | ${name} |`)
    }
  }
  console.log(`\n${m.name}: the ${top} leaf functions with the most time (µs a request)\n`)
  console.log("| µs | function | owner |")
  console.log("|---:|---|---|")
  const list = [...m.main.functions].sort((a, b) => b[1].micros - a[1].micros).slice(0, top)
  for (const [name, { micros, owner }] of list) console.log(`| ${f1(per(m, micros))} | ${name} | ${owner} |`)
}
