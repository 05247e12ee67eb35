// Instructions a request, counted by valgrind's callgrind, filedata's server beside the baseline under the small
// profile's load over real HTTP (docs/performance.md#where-a-requests-time-goes). Each server runs under callgrind, its
// warm-up with the counting off, then one window of load with it on; what the process executed in that window,
// divided by the requests answered in it, by thread and by kind of code at the leaf. Unlike CPU time, an instruction
// count does not move with what else the machine runs (two runs of the same build: docs/performance.md), where the
// load's CPU a request drifts by 5 to 10%. It says what a request executes, not how long that takes: callgrind
// simulates caches (`I1`, `D1`: misses of its model of the first-level caches, not the machine's) but not the
// processor's timing. Under callgrind the servers run 30 to 100 times slower, so the load is light and a request
// count small. The main thread's count is the figure: the other threads are V8's compiler, still at work after a
// warm-up at that speed, and the collector's helpers.
// Options: --duration 60 (seconds counted)  --warmup 150 (seconds, not counted: shorter leaves code unoptimized)
// --connections 8  --levels warn (filedata's LOG_LEVELs)  --top 25 (functions listed)  --against DIR (another
// checkout's server too, at the first level). Needs valgrind (Debian package `valgrind`).

import { spawnSync } from "node:child_process"
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { bodiesOf, load } from "./lib/load.mjs"
import { commandLine } from "./lib/options.mjs"
import { frameOf, jsName, kindOf, packageOf, removeMap } from "./lib/perf.mjs"
import { build, profileDatabase, profileEnv, root, smallShape, start, stop } from "./lib/processes.mjs"

const option = commandLine(import.meta.url, ["against", "connections", "duration", "levels", "top", "warmup"])
const seconds = Number(option("duration", "60"))
const warmup = Number(option("warmup", "150"))
const connections = Number(option("connections", "8"))
const levels = option("levels", "warn").split(",")
const top = Number(option("top", "25"))
const against = option("against", undefined)

for (const tool of ["valgrind", "callgrind_control"]) {
  if (spawnSync(tool, ["--version"]).error !== undefined) {
    console.error(`bench/instructions.mjs needs ${tool} (Debian package valgrind); nothing measured`)
    process.exit(1)
  }
}

const work = join(root, ".bench", "instructions")
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })
build()
const db = await profileDatabase()

const env = profileEnv(db)
const kinds = [
  ...levels.map((level) => ({
    name: `filedata @${level}`,
    slug: `filedata-${level}`,
    args: ["scripts/run.mjs", "server"],
    env: { LOG_LEVEL: level },
    output: join(work, `filedata-${level}.log`)
  })),
  ...(against === undefined
    ? []
    : [
        {
          name: `filedata at ${against}`,
          slug: "filedata-against",
          // Its own scripts/run.mjs brings that checkout's build up to date and runs its bundle.
          args: [join(resolve(against), "scripts/run.mjs"), "server"],
          env: { LOG_LEVEL: levels[0] },
          output: join(work, "filedata-against.log")
        }
      ]),
  { name: "baseline", slug: "baseline", args: ["bench/baseline.mjs", db, "0"], env: {} }
]

// valgrind and callgrind_control find each other through files named after a prefix, the user and the host, the
// last two read from the environment (where `HOST` is the server's listening address): the server's environment.
const control = (pid, prefix, serverEnv, action) => {
  const result = spawnSync("callgrind_control", [`--vgdb-prefix=${prefix}`, action, String(pid)], {
    encoding: "utf8",
    env: { ...process.env, ...serverEnv }
  })
  if (result.status !== 0 || /error|not found/i.test(result.stderr)) {
    throw new Error(`callgrind_control ${action}: ${result.stdout}${result.stderr}`)
  }
}

// A JIT symbol map written under --perf-basic-prof: sorted ranges, looked up by address.
const jitMap = (pid) => {
  const path = `/tmp/perf-${pid}.map`
  const ranges = []
  for (const line of existsSync(path) ? readFileSync(path, "utf8").split("\n") : []) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line)
    if (match === null) continue
    const start = Number.parseInt(match[1], 16)
    ranges.push({ start, end: start + Number.parseInt(match[2], 16), name: match[3] })
  }
  ranges.sort((a, b) => a.start - b.start)
  return (address) => {
    let low = 0
    let high = ranges.length - 1
    while (low <= high) {
      const middle = (low + high) >> 1
      const range = ranges[middle]
      if (address < range.start) high = middle - 1
      else if (address >= range.end) low = middle + 1
      else return range.name
    }
    return undefined
  }
}

// One callgrind output file: its event names and each function's own cost (calls' inclusive lines left out).
const exclusive = async (file) => {
  const names = { ob: new Map(), fn: new Map() }
  const costs = new Map()
  let events = []
  let ob = ""
  let fn = ""
  let callLine = false
  for await (const line of createInterface({ input: createReadStream(file) })) {
    if (line === "") continue
    const first = line.charCodeAt(0)
    if ((first >= 48 && first <= 57) || line[0] === "+" || line[0] === "-" || line[0] === "*") {
      if (callLine) {
        callLine = false
        continue
      }
      const values = line.split(" ")
      const key = `${ob}\t${fn}`
      let cost = costs.get(key)
      if (cost === undefined) {
        cost = new Float64Array(events.length)
        costs.set(key, cost)
      }
      for (let i = 1; i < values.length; i++) cost[i - 1] += Number(values[i])
      continue
    }
    if (line.startsWith("calls=")) {
      callLine = true
      continue
    }
    if (line.startsWith("events: ")) {
      events = line.slice(8).split(" ")
      continue
    }
    const named = /^(c?)(ob|fn)=(?:\((\d+)\))? ?(.*)$/.exec(line)
    if (named === null) continue
    const [, call, kind, id, text] = named
    let name = text
    if (id !== undefined) {
      if (text === "") name = names[kind].get(id) ?? id
      else names[kind].set(id, text)
    }
    if (call === "") {
      if (kind === "ob") ob = name
      else fn = name
    }
  }
  return { events, costs }
}

// What a leaf function is: named from the JIT map when callgrind knows only its address.
const leafOf = (ob, fn, symbolAt) => {
  const address = /^0x([0-9a-f]+)/.exec(fn)
  if (address !== null && (ob === "???" || ob === "")) {
    const symbol = symbolAt(Number.parseInt(address[1], 16))
    if (symbol === undefined) return { frame: { symbol: fn, dso: "perf-map" }, name: "(JIT code not in the map)" }
    const frame = frameOf(symbol, "perf-map")
    // Another checkout's code is named as this one's, so that its packages line up with this checkout's.
    if (frame.js !== undefined && against !== undefined) frame.js.url = frame.js.url.replace(resolve(against), root)
    return { frame, name: frame.js ? jsName(frame) : symbol }
  }
  const frame = frameOf(fn, ob)
  return { frame, name: fn }
}

const add = (map, key, value) => map.set(key, (map.get(key) ?? 0) + value)

const measure = async (kind) => {
  const prefix = join(work, `vgdb-${kind.slug}`)
  const out = join(work, `${kind.slug}.callgrind`)
  const serverEnv = { ...env, ...kind.env }
  const server = await start(
    kind.name,
    [
      "--tool=callgrind",
      "--instr-atstart=no",
      "--cache-sim=yes",
      "--separate-threads=yes",
      // V8 writes its code at run time: without this valgrind would run stale translations of it.
      "--smc-check=all-non-file",
      "--dump-instr=no",
      `--vgdb-prefix=${prefix}`,
      `--callgrind-out-file=${out}`,
      `--log-file=${join(work, `${kind.slug}.valgrind.log`)}`,
      process.execPath,
      // JIT code named for the leaf functions, and kept where the map says it is.
      "--perf-basic-prof",
      "--no-compact-code-space",
      "--no-flush-bytecode",
      // V8 writes a log under --perf-basic-prof: one per server, here, not one per process in the working directory.
      "--no-logfile-per-isolate",
      `--logfile=${join(work, `${kind.slug}.v8.log`)}`,
      ...kind.args
    ],
    serverEnv,
    kind.output,
    { command: "valgrind" }
  )
  const bodies = bodiesOf(smallShape)
  const pid = server.child.pid
  try {
    await load(server.url, bodies, { seconds: warmup, connections })
    control(pid, prefix, serverEnv, "--instr=on")
    const result = await load(server.url, bodies, { seconds, connections })
    control(pid, prefix, serverEnv, "--dump=measured")
    const requests = result.requests.total
    if (result.non2xx > 0 || requests === 0) throw new Error(`${kind.name}: ${result.non2xx} of ${requests} not 2xx`)
    const symbolAt = jitMap(pid)
    // One file per thread; the process's first thread is its main thread (the event loop).
    const files = readdirSync(work)
      .filter((name) => name.startsWith(`${kind.slug}.callgrind.1-`))
      .sort()
    const threads = { main: undefined, others: undefined }
    const kindsOfCode = new Map()
    const functions = new Map()
    for (const file of files) {
      const { events, costs } = await exclusive(join(work, file))
      const totals = new Float64Array(events.length)
      const isMain = file.endsWith("-01")
      for (const [key, cost] of costs) {
        for (let i = 0; i < cost.length; i++) totals[i] += cost[i]
        if (!isMain) continue
        const [ob, fn] = key.split("\t")
        const { frame, name } = leafOf(ob, fn, symbolAt)
        const codeKind = kindOf(frame)
        const label = frame.js ? `JavaScript, ${packageOf(frame.js.url)}` : codeKind
        add(kindsOfCode, label, cost[0])
        add(functions, name, cost[0])
      }
      const at = (event) => totals[events.indexOf(event)] ?? 0
      const summary = { Ir: at("Ir"), I1mr: at("I1mr"), D1mr: at("D1mr") + at("D1mw") }
      if (isMain) threads.main = summary
      else {
        threads.others ??= { Ir: 0, I1mr: 0, D1mr: 0 }
        for (const event of Object.keys(summary)) threads.others[event] += summary[event]
      }
    }
    return { ...kind, requests, threads, kindsOfCode, functions }
  } finally {
    await stop(server)
    removeMap(pid)
  }
}

const measured = []
for (const kind of kinds) {
  console.error(`${kind.name}: ${warmup} s of warm-up, then ${seconds} s counted (under callgrind)`)
  measured.push(await measure(kind))
}
const baseline = measured.at(-1)
const perRequest = (entry, value) => (value ?? 0) / entry.requests
const thousands = (value) => (value / 1000).toFixed(1)
const ratio = (value, base) => (base > 0 ? `${(value / base).toFixed(2)}x` : "")

console.log(
  `\nInstructions a request under the small profile's load (${connections} connections, ${seconds} s counted after ${warmup} s), in thousands\n`
)
console.log(`| | ${measured.map((entry) => entry.name).join(" | ")} |`)
console.log(`|---|${measured.map(() => "---:").join("|")}|`)
console.log(`| requests counted | ${measured.map((entry) => entry.requests).join(" | ")} |`)
const row = (label, value) => {
  const base = perRequest(baseline, value(baseline))
  const cells = measured.map((entry) => {
    const own = perRequest(entry, value(entry))
    return entry === baseline ? thousands(own) : `${thousands(own)} (${ratio(own, base)})`
  })
  console.log(`| ${label} | ${cells.join(" | ")} |`)
}
row("instructions, main thread", (entry) => entry.threads.main?.Ir)
row("instructions, other threads (GC helpers, compilers)", (entry) => entry.threads.others?.Ir)
row("first-level instruction cache misses (simulated), main thread", (entry) => entry.threads.main?.I1mr)
row("first-level data cache misses (simulated), main thread", (entry) => entry.threads.main?.D1mr)

console.log("\nMain thread by kind of code at the leaf (JavaScript by package), thousands of instructions a request\n")
const labels = [...new Set(measured.flatMap((entry) => [...entry.kindsOfCode.keys()]))]
const share = (entry, label) => perRequest(entry, entry.kindsOfCode.get(label))
labels.sort((a, b) => share(measured[0], b) - share(measured[0], a))
console.log(`| kind | ${measured.map((entry) => entry.name).join(" | ")} |`)
console.log(`|---|${measured.map(() => "---:").join("|")}|`)
for (const label of labels) {
  if (measured.every((entry) => share(entry, label) < 50)) continue
  console.log(`| ${label} | ${measured.map((entry) => thousands(share(entry, label))).join(" | ")} |`)
}

// The leaf functions furthest apart between two of the servers measured: what one change moved, where the totals
// of two runs also carry what the warm-up left unoptimized in one window and not in the other.
const compare = (entry, other) => {
  console.log(
    `\nLeaf functions, ${entry.name} against ${other.name} (the ${top} furthest apart), instructions a request\n`
  )
  const names = [...new Set([...entry.functions.keys(), ...other.functions.keys()])]
  const difference = (name) =>
    perRequest(entry, entry.functions.get(name)) - perRequest(other, other.functions.get(name))
  names.sort((a, b) => Math.abs(difference(b)) - Math.abs(difference(a)))
  console.log(`| function | ${entry.name} | ${other.name} | difference |`)
  console.log("|---|---:|---:|---:|")
  for (const name of names.slice(0, top)) {
    const own = perRequest(entry, entry.functions.get(name))
    const theirs = perRequest(other, other.functions.get(name))
    console.log(
      `| ${name.replaceAll("|", "\\|")} | ${own.toFixed(0)} | ${theirs.toFixed(0)} | ${difference(name).toFixed(0)} |`
    )
  }
}
const againstEntry = against === undefined ? undefined : measured.at(-2)
for (const entry of measured.slice(0, -1)) if (entry !== againstEntry) compare(entry, baseline)
if (againstEntry !== undefined) compare(measured[0], againstEntry)
