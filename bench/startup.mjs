// What filedata's start-up loads and spends, beside the baseline's (docs/performance.md#where-start-up-goes):
// modules loaded per package (count and source size), CPU from the process's start to the listening line by
// package and kind of code (Linux `perf`, as bench/profile.mjs, without the code cache: V8 refuses it under perf's
// flags), the same with the cache by V8's own sampler (`profile`), and the idle process's memory by kind (V8 heap
// spaces and code, Node's external memory, the kernel's RSS by mapping). Each in a start of its own, since
// recording modules costs time. Options: --parts modules,cpu,profile,memory  --top 25 (functions listed)
// --frequency 10000 (samples a second).

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { commandLine } from "./lib/options.mjs"
import { account, nodeOptions, packageOf, removeMap } from "./lib/perf.mjs"
import { build, root, start, stop } from "./lib/processes.mjs"

const option = commandLine(import.meta.url, ["frequency", "parts", "top"])
const top = Number(option("top", "25"))
const frequency = Number(option("frequency", "10000"))

const work = join(root, ".bench")
const profiles = join(work, "profiles")
mkdirSync(profiles, { recursive: true })
build()

// An empty database, migrated by a first start that is not measured, as a restart finds it.
const db = join(work, "startup.db")
const env = {
  DATABASE_URL: `file:${db}`,
  PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "warn"
}
if (!existsSync(db)) await stop(await start("filedata", ["scripts/run.mjs", "server"], env))

const probe = ["--import", "./bench/lib/startup-probe.mjs"]
const kinds = [
  { name: "filedata", args: ["scripts/run.mjs", "server"] },
  { name: "baseline", args: ["bench/baseline.mjs", db, "0"] }
]

// Starts `kind` with the probe, signals it once it listens (after `settle` ms), and returns the probe's report.
const probed = async (kind, flags, settle = 0) => {
  const out = join(work, `startup-${kind.name}.json`)
  rmSync(out, { force: true })
  const server = await start(kind.name, [...probe, ...kind.args], { ...env, ...flags, STARTUP_OUT: out })
  if (settle > 0) await sleep(settle)
  process.kill(server.child.pid, "SIGUSR2")
  while (!existsSync(out) || statSync(out).size === 0) await sleep(20)
  await sleep(100)
  await stop(server)
  return { startupMs: server.startupMs, ...JSON.parse(readFileSync(out, "utf8")) }
}

const f1 = (value) => value.toFixed(1)
// A path inside the repository or a package, for reading.
const shortPath = (url) =>
  (url.startsWith("file:") ? fileURLToPath(url) : url).replace(`${root}/`, "").replace(/^.*\/node_modules\//, "")
const mib = (bytes) => (bytes / 1048576).toFixed(1)

const modulesPart = async () => {
  // Modules: ES modules from the hooks, CommonJS ones from require's cache.
  const modules = {}
  for (const kind of kinds) {
    const report = await probed(kind, { STARTUP_MODULES: "1" })
    const byPackage = new Map()
    const files = [
      ...report.esm.filter((m) => m.url.startsWith("file:")).map((m) => fileURLToPath(m.url)),
      ...report.cjs.filter((path) => path.startsWith("/"))
    ]
    // An app's bundle is compiled by its entry with the code cache, past both loaders (docs/performance.md#code-cache).
    for (const file of [...files]) if (file.endsWith("/dist/bundle/main.js")) files.push(join(file, "..", "app.js"))
    for (const file of new Set(files)) {
      const name = packageOf(file)
      const entry = byPackage.get(name) ?? { count: 0, bytes: 0 }
      entry.count += 1
      entry.bytes += statSync(file, { throwIfNoEntry: false })?.size ?? 0
      byPackage.set(name, entry)
    }
    const builtins = new Set(report.esm.filter((m) => m.url.startsWith("node:")).map((m) => m.url))
    // Who first brought each package in from outside it (ES module imports only; CommonJS requires are not seen).
    const broughtBy = new Map()
    const firstParent = new Map()
    for (const { resolved, parent } of report.imports) {
      if (!resolved.startsWith("file:") || parent === undefined) continue
      if (!firstParent.has(resolved)) firstParent.set(resolved, parent)
      const name = packageOf(fileURLToPath(resolved))
      const from = parent.startsWith("file:") ? packageOf(fileURLToPath(parent)) : parent
      if (from !== name && !broughtBy.has(name)) broughtBy.set(name, resolved)
    }
    // The chain of first imports from a package's first module back to filedata's own code.
    const chain = (url) => {
      const steps = [shortPath(url)]
      for (let at = firstParent.get(url); at !== undefined && steps.length < 12; at = firstParent.get(at)) {
        steps.push(shortPath(at))
        if (!at.startsWith("file:") || /^@filedata|^scripts/.test(packageOf(fileURLToPath(at)))) break
      }
      return steps.join(" < ")
    }
    for (const [name, url] of broughtBy) broughtBy.set(name, chain(url))
    modules[kind.name] = { byPackage, broughtBy, files: new Set(files).size, builtins: builtins.size }
  }
  console.log("\nModules loaded by the listening line (files; Node's built-in modules imported apart)\n")
  for (const kind of kinds) {
    const { byPackage, files, builtins } = modules[kind.name]
    const bytes = [...byPackage.values()].reduce((sum, entry) => sum + entry.bytes, 0)
    console.log(
      `${kind.name}: ${files} files, ${mib(bytes)} MiB of source; ${builtins} node: modules imported from ESM`
    )
  }
  console.log("\n| package | filedata files | filedata KiB | baseline files | first import, back to filedata's code |")
  console.log("|---|---:|---:|---:|---|")
  const packages = [...modules.filedata.byPackage].sort((a, b) => b[1].bytes - a[1].bytes)
  for (const [name, { count, bytes }] of packages) {
    console.log(
      `| ${name} | ${count} | ${(bytes / 1024).toFixed(0)} | ${modules.baseline.byPackage.get(name)?.count ?? ""} | ` +
        `${modules.filedata.broughtBy.get(name) ?? "(CommonJS require)"} |`
    )
  }
}

const cpuPart = async () => {
  // CPU from the process's start to the listening line: perf runs the server and samples it from its first
  // instruction; the server is killed at its listening line, so its shutdown is not counted.
  const cpu = {}
  for (const kind of kinds) {
    const out = join(profiles, `startup-${kind.name}.perf.data`)
    const perf = await start(
      kind.name,
      [
        "record",
        "-e",
        "cpu-clock:u",
        "-c",
        String(Math.round(1e9 / frequency)),
        "-g",
        "-o",
        out,
        "--",
        process.execPath,
        ...nodeOptions,
        ...kind.args
      ],
      env,
      undefined,
      { command: "perf" }
    )
    const pid = Number(
      readFileSync(`/proc/${perf.child.pid}/task/${perf.child.pid}/children`, "utf8").trim().split(" ")[0]
    )
    process.kill(pid, "SIGKILL")
    await stop(perf)
    cpu[kind.name] = { startupMs: perf.startupMs, ...(await account(out, pid)) }
    removeMap(pid)
  }
  console.log("\nStart-up CPU, process start to the listening line, main thread (ms)\n")
  for (const kind of kinds) {
    const { startupMs, main, others } = cpu[kind.name]
    console.log(
      `${kind.name}: ${startupMs.toFixed(0)} ms to the listening line under perf; CPU sampled ${f1(main.total / 1000)} ms ` +
        `on the main thread, ${f1(others.total / 1000)} ms on others`
    )
  }
  const compare = (label, pick, min = 2000) => {
    console.log(`\n| ${label} | filedata | baseline |`)
    console.log("|---|---:|---:|")
    for (const [name, micros] of [...pick(cpu.filedata)].sort((a, b) => b[1] - a[1])) {
      if (micros < min) continue
      console.log(`| ${name} | ${f1(micros / 1000)} | ${f1((pick(cpu.baseline).get(name) ?? 0) / 1000)} |`)
    }
  }
  compare("owner (package of the nearest JavaScript frame)", (c) => c.main.owners)
  compare("kind of code at the leaf", (c) => c.main.kinds)
  compare("package anywhere on the stack (inclusive)", (c) => c.main.inclusive, 5000)
  console.log(`\nfiledata: the ${top} leaf functions with the most time at start (ms)\n`)
  console.log("| ms | function | owner |")
  console.log("|---:|---|---|")
  for (const [name, { micros, owner }] of [...cpu.filedata.main.functions]
    .sort((a, b) => b[1].micros - a[1].micros)
    .slice(0, top)) {
    console.log(`| ${f1(micros / 1000)} | ${name} | ${owner} |`)
  }
}

// The V8 sampler keeps the code cache, which perf's flags make V8 refuse: this is the start as users get it.
// Samples past the listening line (the stop) are left out; a bundle's frames are owned by the module its line
// is in (esbuild's `// path` comments), the rest by package as above.
const profilePart = async () => {
  const owners = {}
  for (const kind of kinds) {
    const dir = join(profiles, `startup-${kind.name}-cpuprofile`)
    rmSync(dir, { recursive: true, force: true })
    const server = await start(
      kind.name,
      ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "500", ...kind.args],
      env
    )
    await stop(server)
    const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), "utf8"))
    const bundleModules = new Map()
    const moduleOf = (url, line) => {
      if (url.startsWith("node:")) return "Node's own modules"
      if (!url.endsWith("/dist/bundle/app.js")) return url === "" ? "" : packageOf(url)
      if (!bundleModules.has(url)) {
        let current = "(bundle's own helpers)"
        bundleModules.set(
          url,
          readFileSync(url.startsWith("file:") ? fileURLToPath(url) : url, "utf8")
            .split("\n")
            .map((text) => {
              const path = /^\/\/ ((?:node_modules|packages|apps)\/\S+)$/.exec(text)?.[1]
              if (path !== undefined) current = packageOf(join(root, path))
              return current
            })
        )
      }
      return bundleModules.get(url)[line] ?? "?"
    }
    const byId = new Map(profile.nodes.map((node) => [node.id, node]))
    const parent = new Map(profile.nodes.flatMap((node) => (node.children ?? []).map((child) => [child, node.id])))
    const owner = new Map()
    let at = 0
    let total = 0
    for (let i = 0; i < profile.samples.length; i++) {
      at += profile.timeDeltas[i] ?? 0
      if (at / 1000 > server.startupMs) break
      const micros = profile.timeDeltas[i + 1] ?? 0
      total += micros
      // The nearest frame with a module; Node's internals, the collector and idle time by their own names.
      let name = ""
      for (let id = profile.samples[i]; id !== undefined && name === ""; id = parent.get(id)) {
        const frame = byId.get(id).callFrame
        name = frame.url === "" ? "" : moduleOf(frame.url, frame.lineNumber)
        if (id === profile.samples[i] && frame.url === "") name = frame.functionName
      }
      owner.set(name, (owner.get(name) ?? 0) + micros)
    }
    owners[kind.name] = { owner, total, startupMs: server.startupMs }
  }
  console.log("\nStart-up with the code cache, V8's sampler, main thread to the listening line (ms)\n")
  for (const kind of kinds) {
    const { total, startupMs } = owners[kind.name]
    console.log(`${kind.name}: ${startupMs.toFixed(0)} ms to the listening line; ${f1(total / 1000)} ms sampled`)
  }
  console.log("\n| owner (module of the nearest frame) | filedata | baseline |")
  console.log("|---|---:|---:|")
  for (const [name, micros] of [...owners.filedata.owner].sort((a, b) => b[1] - a[1])) {
    if (micros < 1000) continue
    console.log(`| ${name} | ${f1(micros / 1000)} | ${f1((owners.baseline.owner.get(name) ?? 0) / 1000)} |`)
  }
}

const memoryPart = async () => {
  // Memory of the idle process, a second after the listening line.
  const smapsByMapping = (text) => {
    const rss = new Map()
    let name = ""
    for (const line of text.split("\n")) {
      const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
      if (header) {
        const path = header[1]
        name =
          path === ""
            ? "anonymous (V8 heap, malloc arenas, thread stacks)"
            : path.startsWith("[")
              ? path
              : path.endsWith(".node")
                ? `${path.split("/").at(-1)} (native addon)`
                : path.split("/").at(-1)
        continue
      }
      const match = /^Rss:\s+(\d+) kB/.exec(line)
      if (match) rss.set(name, (rss.get(name) ?? 0) + Number(match[1]) * 1024)
    }
    return rss
  }
  const memory = {}
  for (const kind of kinds) memory[kind.name] = await probed(kind, {}, 1000)
  console.log("\nIdle memory a second after the listening line (MiB)\n")
  console.log("| | filedata | baseline |")
  console.log("|---|---:|---:|")
  const line = (label, pick) =>
    console.log(`| ${label} | ${mib(pick(memory.filedata))} | ${mib(pick(memory.baseline))} |`)
  line("RSS", (r) => r.status.VmRSS * 1024)
  line("RSS anonymous", (r) => r.status.RssAnon * 1024)
  line("RSS file-backed (code of node, addons)", (r) => r.status.RssFile * 1024)
  line("V8 heap used", (r) => r.memory.heapUsed)
  line("V8 heap committed", (r) => r.memory.heapTotal)
  for (const space of memory.filedata.spaces.map((s) => s.space_name)) {
    const of = (r) => r.spaces.find((s) => s.space_name === space)
    if (of(memory.filedata).space_size === 0 && of(memory.baseline)?.space_size === 0) continue
    line(`- ${space}: used`, (r) => of(r)?.space_used_size ?? 0)
    line(`- ${space}: committed`, (r) => of(r)?.space_size ?? 0)
  }
  line(
    "V8 code and metadata (bytecode, compiled code)",
    (r) => r.code.code_and_metadata_size + r.code.bytecode_and_metadata_size
  )
  line("external (Buffers, native objects V8 knows of)", (r) => r.memory.external)
  line("- of which array buffers", (r) => r.memory.arrayBuffers)
  const mappings = smapsByMapping(memory.filedata.smaps)
  const baseMappings = smapsByMapping(memory.baseline.smaps)
  console.log("\n| RSS by mapping | filedata | baseline |")
  console.log("|---|---:|---:|")
  for (const [name, bytes] of [...mappings].sort((a, b) => b[1] - a[1])) {
    if (bytes < 512 * 1024 && (baseMappings.get(name) ?? 0) < 512 * 1024) continue
    console.log(`| ${name} | ${mib(bytes)} | ${mib(baseMappings.get(name) ?? 0)} |`)
  }
}

const parts = { modules: modulesPart, cpu: cpuPart, profile: profilePart, memory: memoryPart }
for (const part of option("parts", "modules,cpu,profile,memory").split(",")) await parts[part]()
