// The server's bundle as `pnpm start` runs it (scripts/bundle.mjs; the tests' global setup built it): what a start
// loads leaves out what no request needs, and what only some configurations or requests need waits in chunks
// imported on demand (docs/performance.md#bundled-entries).

import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Processes } from "@filedata/testing"

const entry = join(Processes.root, Processes.builtEntry("server"))

/** The bundle's files a start loads: the entry and the chunks it imports statically, transitively. */
const loadedAtStart = (): ReadonlyMap<string, string> => {
  const files = new Map<string, string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    const text = readFileSync(file, "utf8")
    files.set(file, text)
    for (const match of text.matchAll(/^import [^;]*?from "(\.\/chunk-[\w-]+\.js)";$/gm)) {
      visit(join(dirname(file), match[1] ?? ""))
    }
  }
  visit(entry)
  return files
}

/** The modules bundled into `text`: esbuild names each one in a comment before its code. */
const modulesIn = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/^\/\/ (\S+)$/gm)].map((match) => match[1] ?? "")

/** Node's built-in modules `text` imports. */
const builtinsIn = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/^import [^;]*?from "(node:[\w/]+)";$/gm)].map((match) => match[1] ?? "")

describe("the server's bundle", () => {
  const files = loadedAtStart()
  const modules = [...files.values()].flatMap(modulesIn)
  const builtins = new Set([...files.values()].flatMap(builtinsIn))

  it("is one entry and a few chunks, holding the server's own modules", () => {
    expect(files.size).toBeLessThanOrEqual(6)
    expect(modules).toContain("apps/server/src/Server.ts")
    expect(modules.some((path) => path.includes("/node_modules/effect/"))).toBe(true)
  })

  it("leaves out at start what no request needs", () => {
    const unwanted = [
      "/node_modules/fast-check/",
      "/node_modules/pure-rand/",
      "/node_modules/undici/",
      "NodeCommandExecutor",
      "NodeTerminal",
      "packages/postgres/",
      "packages/rate-limiter-redis/",
      "/node_modules/@effect/sql-pg/"
    ]
    for (const part of unwanted) expect(modules.filter((path) => path.includes(part))).toEqual([])
    expect(builtins.has("node:readline")).toBe(false)
    expect(builtins.has("node:child_process")).toBe(false)
  })

  it("keeps the drivers in node_modules, imported by a path relative to the bundle", () => {
    const text = [...files.values()].join("\n")
    expect(text).toMatch(/^import \w+ from "(\.\.\/)+node_modules\/\.pnpm\/better-sqlite3@[^"]+";$/m)
    expect(modules.filter((path) => path.includes("/node_modules/better-sqlite3/"))).toEqual([])
  })
})
