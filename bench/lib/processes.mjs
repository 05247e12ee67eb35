// The real build and the real server as child processes, for the bench scripts.

import { spawn, spawnSync } from "node:child_process"
import { once } from "node:events"
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { writeFixture } from "./fixture.mjs"

export const root = join(dirname(fileURLToPath(import.meta.url)), "../..")

// Brings every dist/ up to date as `pnpm build` does (incremental tsc -b, which the scripts that load a module of
// a package need, then the apps' bundles as `pnpm start` makes them); exits when the build fails.
// `dir`: another checkout (its own `pnpm install` done), for `pnpm bench --against`.
export const build = (dir = root) => {
  const tsc = createRequire(join(dir, "package.json")).resolve("typescript/bin/tsc")
  for (const args of [
    [tsc, "-b", join(dir, "tsconfig.build.json")],
    [join(dir, "scripts/run.mjs"), "--build-only"]
  ]) {
    const result = spawnSync(process.execPath, args, { cwd: dir, stdio: "inherit" })
    if (result.status !== 0) process.exit(1)
  }
}

// Starts a Node script (or, with `command`, another program such as `pnpm`) and resolves once it prints its
// listening line. With `output`, its standard output goes to that file instead of a pipe to this process: at
// LOG_LEVEL=info filedata writes a line per request, and this process, which also generates the load, would
// otherwise spend its time reading them. `detached` puts it in a process group of its own, which `stop`
// signals whole (pnpm runs the server in a child process of its own). `cwd`: the checkout it runs in.
export const start = async (
  name,
  args,
  env,
  output,
  { command = process.execPath, detached = false, cwd = root } = {}
) => {
  const began = performance.now()
  const fd = output === undefined ? undefined : openSync(output, "w")
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", fd ?? "pipe", "inherit"],
    detached
  })
  // The child has its own copy of the descriptor.
  if (fd !== undefined) closeSync(fd)
  if (output !== undefined) {
    const url = await new Promise((resolve, reject) => {
      const poll = setInterval(() => {
        const match = /listening on (http:\/\/\S+)/.exec(readFileSync(output, "utf8").slice(0, 4096))
        if (match) {
          clearInterval(poll)
          resolve(match[1].replace("0.0.0.0", "127.0.0.1"))
        }
      }, 2)
      child.on("exit", (code) => {
        clearInterval(poll)
        reject(new Error(`${name} exited with ${code}: ${readFileSync(output, "utf8").slice(0, 4096)}`))
      })
    })
    return { name, child, url, detached, startupMs: performance.now() - began }
  }
  let text = ""
  const url = await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      text += chunk
      const match = /listening on (http:\/\/\S+)/.exec(text)
      if (match) {
        child.stdout.off("data", onData)
        resolve(match[1].replace("0.0.0.0", "127.0.0.1"))
      }
    }
    child.stdout.on("data", onData)
    child.on("exit", (code) => reject(new Error(`${name} exited with ${code}: ${text}`)))
  })
  child.stdout.resume()
  return { name, child, url, detached, startupMs: performance.now() - began }
}

// SIGTERM, then the exit code once it has exited.
export const stop = async (server) => {
  if (server.child.exitCode !== null) return server.child.exitCode
  if (server.detached) process.kill(-server.child.pid, "SIGTERM")
  else server.child.kill("SIGTERM")
  const [code] = await once(server.child, "exit")
  return code
}

// A memory figure of /proc/PID/status (VmRSS, VmHWM, ...) in MiB.
export const status = (pid, field) =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024

// The process's CPU time (user + system, every thread: zlib works on libuv's pool) in milliseconds, from
// /proc/PID/stat.
const ticksPerSecond = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100
export const cpuMs = (pid) => {
  const { user, system } = cpuSplit(pid)
  return user + system
}

// The same, user and system (kernel) time apart, in milliseconds.
export const cpuSplit = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return { user: (Number(fields[11]) * 1000) / ticksPerSecond, system: (Number(fields[12]) * 1000) / ticksPerSecond }
}

// Writing 5 to clear_refs resets the peak RSS (VmHWM), so each scenario reports its own peak.
export const resetPeak = (pid) => writeFileSync(`/proc/${pid}/clear_refs`, "5")

// The small profile's shape, and its database for the scripts that look at one request at a time
// (`bench/profile.mjs`, `bench/route.mjs`, `bench/instructions.mjs`): `.bench/profile-small.db`, imported with the
// real CLI when missing. A file of its own, so a `pnpm bench` run meanwhile does not replace it.
export const smallShape = { files: 1000, submissionsPerFile: 20, users: 100 }
export const profileDatabase = async () => {
  const work = join(root, ".bench")
  mkdirSync(work, { recursive: true })
  const fixture = join(work, "small.json")
  if (!existsSync(fixture)) await writeFixture(fixture, smallShape)
  const db = join(work, "profile-small.db")
  if (!existsSync(db)) {
    const imported = spawnSync(process.execPath, ["apps/cli/dist/bundle/main.js", "import", fixture], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: `file:${db}`, LOG_LEVEL: "warn" },
      stdio: "inherit"
    })
    if (imported.status !== 0) process.exit(1)
  }
  return db
}

// The environment those scripts serve that database in, filedata's and the baseline's alike: on a free loopback
// port, the rate limiter's quotas out of the load's way.
export const profileEnv = (db) => ({
  DATABASE_URL: `file:${db}`,
  PORT: "0",
  HOST: "127.0.0.1",
  RATE_LIMIT_MAX: "1000000000",
  RATE_LIMIT_IP_MAX: "1000000000"
})
