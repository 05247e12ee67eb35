// The server's bundle as `pnpm start` runs it (scripts/bundle.mjs; the tests' global setup built it): one file that
// leaves out what no request needs and loads what only some configurations need on demand, compiled with V8's
// code cache the build made (docs/performance.md#bundled-entries, docs/performance.md#code-cache).

import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Processes, TempDirectory } from "@filedata/testing"

const dir = dirname(join(Processes.root, Processes.builtEntry("server")))
const text = readFileSync(join(dir, "app.js"), "utf8")

/** The modules bundled: esbuild names each one in a comment before its code. */
const modules = [...text.matchAll(/^\/\/ (\S+)$/gm)].map((match) => match[1] ?? "")

/** What the bundle's top level requires as it is evaluated: Node's modules and the drivers. */
const requiredAtStart = [...text.matchAll(/^var \w+ = (?:__toESM\()?require\("([^"]+)"\)/gm)].map(
  (match) => match[1] ?? ""
)

describe("the server's bundle", () => {
  it("is one file holding the server's own modules, with no import() left, which a cached script cannot run", () => {
    expect(modules).toContain("apps/server/src/Server.ts")
    expect(modules.some((path) => path.includes("/node_modules/effect/"))).toBe(true)
    expect(text).not.toMatch(/\bimport\(/)
  })

  it("leaves out what no request needs", () => {
    const unwanted = [
      "/node_modules/fast-check/",
      "/node_modules/pure-rand/",
      "/node_modules/undici/",
      "NodeCommandExecutor",
      "NodeTerminal"
    ]
    for (const part of unwanted) expect(modules.filter((path) => path.includes(part))).toEqual([])
    expect(requiredAtStart).not.toContain("node:readline")
    expect(requiredAtStart).not.toContain("node:child_process")
  })

  it("loads the PostgreSQL and Redis drivers only when configured: a start on SQLite loads neither", async () => {
    const probe = TempDirectory.write(
      TempDirectory.make("bundle-drivers"),
      "probe.cjs",
      `process.on("exit", () => process.stderr.write("loaded=" + JSON.stringify(Object.keys(require.cache).filter((path) => /node_modules[/][.]pnpm[/](pg|ioredis|better-sqlite3)@/.test(path)).map((path) => path.match(/[.]pnpm[/]([a-z-0-9]+)@/)[1]).filter((name, i, all) => all.indexOf(name) === i))))`
    )
    const dir = TempDirectory.make("bundle-drivers-db")
    const served = await Processes.serve({
      NODE_OPTIONS: `--require ${probe}`,
      DATABASE_URL: `file:${join(dir, "filedata.db")}`,
      HOST: "127.0.0.1",
      PORT: "0"
    })
    const exit = await Processes.stop(served)
    expect(exit.stderr).toContain('loaded=["better-sqlite3"]')
  })

  it("keeps the drivers in node_modules, required by a path relative to the bundle; pg and ioredis on demand", () => {
    const drivers = requiredAtStart.filter((path) => path.includes("/node_modules/"))
    expect(drivers.length).toBeGreaterThan(0)
    for (const path of drivers) expect(path).toMatch(/^(\.\.\/)+node_modules\/\.pnpm\/better-sqlite3@[^/]+\//)
    expect(text).toMatch(/^ {4}\w+ = (__toESM\()?require\("(\.\.\/)+node_modules\/\.pnpm\/pg@[^"]+"\)/m)
    expect(text).toMatch(/^ {4}\w+ = (__toESM\()?require\("(\.\.\/)+node_modules\/\.pnpm\/ioredis@[^"]+"\)/m)
    expect(modules.filter((path) => path.includes("/node_modules/better-sqlite3/"))).toEqual([])
  })
})

describe("the code cache of each app's bundle", () => {
  it.each(["server", "cli"] as const)("is taken by V8 in a plain Node: %s", async (app) => {
    const bundle = dirname(join(Processes.root, Processes.builtEntry(app)))
    // Compiled as the entry compiles it, in a process of its own, so that no flag of the test runner's counts.
    const check = Processes.node([
      "-e",
      `const { readFileSync } = require("node:fs"); const Module = require("node:module"); const { Script } = require("node:vm")
       const file = ${JSON.stringify(join(bundle, "app.js"))}
       const script = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file, cachedData: readFileSync(${JSON.stringify(join(bundle, "app.cache"))}) })
       process.stdout.write(String(script.cachedDataRejected))`
    ])
    const exit = await Processes.finish(check)
    expect(exit.stdout, exit.stderr).toBe("false")
  })

  it("is passed over with source maps on: Node's own loader runs the bundle, so stack traces map to the sources", async () => {
    const app = join(dirname(join(Processes.root, Processes.builtEntry("cli"))), "app.js")
    // Whether Node holds the bundle's source map as the command exits: only what its own loader compiled.
    const probe = TempDirectory.write(
      TempDirectory.make("bundle-source-maps"),
      "probe.cjs",
      `process.on("exit", () => process.stderr.write("mapped=" + (require("node:module").findSourceMap(${JSON.stringify(app)}) !== undefined)))`
    )
    const run = (flags: ReadonlyArray<string>) =>
      Processes.finish(Processes.node([...flags, "-r", probe, Processes.builtEntry("cli"), "--help"]))
    const mapped = await run(["--enable-source-maps"])
    expect(mapped.code, mapped.stderr).toBe(0)
    expect(mapped.stderr).toContain("mapped=true")
    const cached = await run([])
    expect(cached.code, cached.stderr).toBe(0)
    expect(cached.stderr).toContain("mapped=false")
  })
})
