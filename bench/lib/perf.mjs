// CPU accounting with Linux `perf`: on-CPU samples of a process (user space, every thread), with call stacks
// through JavaScript (Node run with --perf-basic-prof --interpreted-frames-native-stack), summed by package, by
// kind of code and by function. Unlike V8's own profiler, which samples by wall time, a sample is taken only
// while the process runs, so time the process spends waiting for a core, on a machine shared with the load
// generator and anything else, is not counted. Kernel time (system calls: the socket writes, the file checks) is
// not sampled at the default perf_event_paranoid; /proc gives it per process.

import { spawn } from "node:child_process"
import { once } from "node:events"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { SourceMap } from "node:module"
import { dirname, join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { root } from "./processes.mjs"

// The Node options that let perf name JavaScript frames and walk through them.
// V8 also writes a log file of its own under these flags: one, in .bench/, instead of one per process in the
// working directory. Code space is not compacted and bytecode not flushed, so that code does not move or go away
// under the addresses the map names (code freed and its address reused can still be named wrongly: a long warm-up
// makes that rare; a profile whose owners look absurd, SQLite under undici, is one of those).
export const nodeOptions = [
  "--perf-basic-prof",
  "--interpreted-frames-native-stack",
  "--no-compact-code-space",
  "--no-flush-bytecode",
  "--no-logfile-per-isolate",
  `--logfile=${join(root, ".bench", "v8.log")}`
]

// Samples `pid` (all its threads) until `stop` is called, `frequency` times a second of its CPU time. A fixed
// period (`-c`): in frequency mode (`-F`) perf stopped sampling part-way through busy windows here.
export const record = (pid, out, frequency = 4000) => {
  const period = String(Math.round(1e9 / frequency))
  const perf = spawn("perf", ["record", "-e", "cpu-clock:u", "-c", period, "-g", "-p", String(pid), "-o", out], {
    stdio: ["ignore", "ignore", "pipe"]
  })
  let errors = ""
  perf.stderr.on("data", (chunk) => (errors += chunk))
  return {
    stop: async () => {
      perf.kill("SIGINT")
      const [code] = await once(perf, "exit")
      if (code !== 0 && !/Captured and wrote/.test(errors)) throw new Error(`perf record failed: ${errors}`)
    }
  }
}

// Removes the JIT symbol map Node wrote for `pid` under --perf-basic-prof, once perf script has read it.
export const removeMap = (pid) => rmSync(`/tmp/perf-${pid}.map`, { force: true })

const JS = /^JS:[*^~+-]?(.*?)\s*((?:node:|file:\/\/|\/)\S*?):(\d+):(\d+)$/

/** A frame from its symbol and the object it is in; a JavaScript frame (a JIT map's `JS:` symbol) gets its source. */
export const frameOf = (symbol, dso) => {
  const js = JS.exec(symbol)
  if (js) {
    const at = original(js[2], Number(js[3]), Number(js[4]))
    return { symbol, dso, js: { name: js[1] || "(anonymous)", ...at } }
  }
  return { symbol, dso }
}

const frameOfLine = (line) => {
  // "\t    7f1e2c171dd3 JS:*writevGeneric node:internal/stream_base_commons:123:23+0x5d3 (/tmp/perf-1.map)"
  const match = /^\s*[0-9a-f]+ (.*) \((.*)\)$/.exec(line)
  if (!match) return undefined
  return frameOf(match[1].replace(/\+0x[0-9a-f]+$/, ""), match[2])
}

// A function of an app's bundle (apps/APP/dist/bundle/, docs/performance.md#bundled-entries) is named by where
// its source map puts it, so its time counts for the package it came from, not for the bundle.
const maps = new Map()
const original = (url, line, column) => {
  const path = url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url
  if (!/\/dist\/bundle\/[^/]+\.js$/.test(path)) return { url, line }
  if (!maps.has(path)) {
    maps.set(path, existsSync(`${path}.map`) ? new SourceMap(JSON.parse(readFileSync(`${path}.map`, "utf8"))) : null)
  }
  const entry = maps.get(path)?.findEntry(line - 1, column - 1)
  if (entry?.originalSource === undefined) return { url, line }
  return { url: resolve(dirname(path), entry.originalSource), line: entry.originalLine + 1 }
}

// Every sample of `file`: its thread, its weight in µs and its frames, leaf first.
export async function* samples(file) {
  const script = spawn("perf", ["script", "-i", file, "-F", "tid,period,ip,sym,dso"], {
    stdio: ["ignore", "pipe", "ignore"]
  })
  let current
  for await (const line of createInterface({ input: script.stdout })) {
    if (line === "") {
      if (current !== undefined) yield current
      current = undefined
      continue
    }
    if (current === undefined) {
      const [tid, period] = line.trim().split(/\s+/).map(Number)
      current = { tid, micros: period / 1000, frames: [] }
      continue
    }
    const frame = frameOfLine(line)
    if (frame !== undefined) current.frames.push(frame)
  }
  if (current !== undefined) yield current
}

const GC =
  /v8::internal::(Heap|Scavenger|Scavenge|MarkCompact|MinorMarkCompact|MarkingVisitor|ConcurrentMarking|Sweeper|Evacuat|MemoryAllocator|IncrementalMarking|PagedSpace|MarkingWorklist|GCTracer|ArrayBufferSweeper|.*Marking|.*Evacuat|Page)/
const COMPILE =
  /v8::internal::(Parser|Scanner|Compiler|compiler::|maglev::|baseline::|Baseline|BytecodeGenerator|interpreter::|Zone|AstNode|PreParser|Turbofan|Pipeline|.*Compil|ParseInfo|DeclarationScope|Scope::)/

/** What kind of code a leaf frame is. */
export const kindOf = (frame) => {
  if (frame === undefined) return "unknown"
  if (frame.js) return "JavaScript"
  const { symbol, dso } = frame
  if (dso.endsWith(".node")) return `native addon ${dso.split("/").at(-1)}`
  if (/libc\.so|libm\.so|libstdc/.test(dso)) return "libc"
  if (GC.test(symbol)) return "garbage collector"
  if (COMPILE.test(symbol)) return "V8 parser and compilers"
  if (/^Builtins_/.test(symbol)) return "V8 builtins"
  if (/^(v8::|v8_|.*Isolate|Runtime_)/.test(symbol) || symbol.startsWith("v8::")) return "V8 runtime"
  if (/^(uv_|uv__)/.test(symbol)) return "libuv"
  if (/llhttp/.test(symbol)) return "llhttp"
  if (/^(node::|node_)/.test(symbol)) return "Node C++"
  if (/^(EVP_|SHA|sha|OPENSSL|CRYPTO|ossl|BN_)/.test(symbol)) return "OpenSSL"
  if (dso.includes("perf-") || symbol === "[unknown]") return "unknown JIT code"
  return `other (${dso.split("/").at(-1)})`
}

// The package a script belongs to: the npm package under node_modules (pnpm's store included), the workspace
// package under packages/ or apps/, `node:<module>` for Node's own JavaScript.
export const packageOf = (url) => {
  if (url.startsWith("node:")) return url
  const path = url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url
  const at = path.lastIndexOf("/node_modules/")
  if (at !== -1) {
    const [first, second] = path.slice(at + "/node_modules/".length).split("/")
    return first.startsWith("@") ? `${first}/${second}` : first
  }
  if (path.startsWith(root)) {
    const [top, name] = path.slice(root.length + 1).split("/")
    if (top === "packages" || top === "apps") return `@filedata/${name}${top === "apps" ? " (app)" : ""}`
    return top
  }
  return path === "" ? "" : "other"
}

const add = (map, key, micros) => map.set(key, (map.get(key) ?? 0) + micros)

// A JavaScript frame's package, with Node's own modules by module.
const ownerOf = (frame) => packageOf(frame.js.url)

/** A JavaScript frame as `name path:line`, the path inside the repository or the package. */
export const jsName = ({ js }) =>
  `${js.name} ${js.url
    .replace(/^file:\/\//, "")
    .replace(/^.*\/node_modules\//, "")
    .replace(`${root}/`, "")}:${js.line}`

// The code measured against: filedata's packages, or the bench's own scripts (the baseline).
const isOwn = (frame) => frame.js !== undefined && /^(@filedata\/|bench$)/.test(ownerOf(frame))

/**
 * Sums the samples of the main thread (`pid`) and of the others. Per sample: its owner (the package of the
 * nearest JavaScript frame from the leaf up, so native and builtin time counts for the JavaScript that called
 * it), the kind of its leaf, its leaf function, and every package anywhere on its stack (inclusive time).
 */
export const account = async (file, pid) => {
  const main = {
    total: 0,
    owners: new Map(),
    kinds: new Map(),
    functions: new Map(),
    inclusive: new Map(),
    ownerKinds: new Map(),
    ownNearest: new Map(),
    ownInclusive: new Map()
  }
  const others = { total: 0, kinds: new Map() }
  for await (const sample of samples(file)) {
    const leaf = sample.frames[0]
    const kind = kindOf(leaf)
    if (sample.tid !== pid) {
      others.total += sample.micros
      add(others.kinds, kind, sample.micros)
      continue
    }
    main.total += sample.micros
    add(main.kinds, kind, sample.micros)
    const nearest = sample.frames.find((frame) => frame.js)
    const owner = nearest === undefined ? "(no JavaScript on the stack)" : ownerOf(nearest)
    add(main.owners, owner, sample.micros)
    add(main.ownerKinds, `${owner}\t${kind === "JavaScript" ? "JavaScript" : kind}`, sample.micros)
    const name = leaf === undefined ? "unknown" : leaf.js ? jsName(leaf) : `${leaf.symbol} [${kind}]`
    const entry = main.functions.get(name) ?? { micros: 0, owner }
    entry.micros += sample.micros
    main.functions.set(name, entry)
    for (const pkg of new Set(sample.frames.filter((frame) => frame.js).map(ownerOf)))
      add(main.inclusive, pkg, sample.micros)
    // The nearest function of the code measured, and every one on the stack: which of its functions cause the
    // time, Effect's runtime, Node and SQLite below them included.
    const own = sample.frames.filter(isOwn)
    add(main.ownNearest, own.length === 0 ? "(none of it on the stack)" : jsName(own[0]), sample.micros)
    for (const fn of new Set(own.map(jsName))) add(main.ownInclusive, fn, sample.micros)
  }
  return { main, others }
}
