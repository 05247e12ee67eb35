// Loaded with `node --import ./bench/lib/startup-probe.mjs ...` by bench/startup.mjs. With STARTUP_MODULES set,
// every module loaded is recorded. SIGUSR2 writes STARTUP_OUT: the modules and the memory composition at that
// moment (V8's heap spaces and code, Node's external memory, the kernel's RSS split).

import { readFileSync, writeFileSync } from "node:fs"
import { createRequire, register } from "node:module"
import { getHeapCodeStatistics, getHeapSpaceStatistics, getHeapStatistics } from "node:v8"
import { MessageChannel } from "node:worker_threads"

const out = process.env.STARTUP_OUT
const esm = []
const imports = []
if (process.env.STARTUP_MODULES) {
  const { port1, port2 } = new MessageChannel()
  port1.on("message", (message) => (message.resolved === undefined ? esm : imports).push(message))
  port1.unref()
  register("./startup-hooks.mjs", import.meta.url, { data: { port: port2 }, transferList: [port2] })
}

const report = () => {
  const status = readFileSync("/proc/self/status", "utf8")
  const kib = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN)
  writeFileSync(
    out,
    JSON.stringify({
      esm,
      imports,
      cjs: Object.keys(createRequire(import.meta.url).cache),
      memory: process.memoryUsage(),
      heap: getHeapStatistics(),
      spaces: getHeapSpaceStatistics(),
      code: getHeapCodeStatistics(),
      status: { VmRSS: kib("VmRSS"), RssAnon: kib("RssAnon"), RssFile: kib("RssFile"), RssShmem: kib("RssShmem") },
      smaps: readFileSync("/proc/self/smaps", "utf8")
    })
  )
}

process.on("SIGUSR2", report)
