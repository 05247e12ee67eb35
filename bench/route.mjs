// A request's own CPU without HTTP: filedata's hot route and the baseline's listener run in process on fake
// requests and responses, the small profile's bodies over its database (docs/performance.md#where-a-requests-time-goes).
// No socket, no parser, no load generator sharing the cores: the figure is each one's own work a request, steady
// enough to compare two versions of the route that `pnpm bench` cannot tell apart through the machine's drift.
// Each kind runs in a process of its own, `--rounds` times in turn, each round `--runs` runs of `--requests`
// requests after a warm-up; the medians are printed. `--against DIR` adds the route of another checkout (its own
// `pnpm install` done), to compare a change with the code before it.
// `--level info` serves at that LOG_LEVEL with the service's logger, as `pnpm start` does (its lines go to a pipe
// this script drops): what a request line costs.
// Options: --requests 100000  --runs 3  --rounds 3  --against DIR  --level warn

import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import * as esbuild from "esbuild"
import { commandLine } from "./lib/options.mjs"
import { build, profileDatabase, root } from "./lib/processes.mjs"

const option = commandLine(import.meta.url, ["against", "requests", "rounds", "runs", "level"])
const requests = option("requests", "100000")
const runs = option("runs", "3")
const rounds = Number(option("rounds", "3"))
const against = option("against", undefined)
const level = option("level", "warn")

build()
const db = await profileDatabase()

// filedata's side of checkout `dir` bundled as the server's bundle is (scripts/bundle.mjs): workspace packages
// from their TypeScript sources, better-sqlite3 left to Node. Written under the server's dist/, so that what the
// bundle resolves at run time (swagger-ui-dist's package.json) resolves as it does for the server.
const bundle = async (dir) => {
  const outfile = join(dir, "apps/server/dist/bench/route.mjs")
  const workspace = /^@filedata\/([\w-]+)$/
  await esbuild.build({
    absWorkingDir: dir,
    entryPoints: [join(root, "bench/lib/route-filedata.mjs")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "error",
    nodePaths: [join(dir, "apps/server/node_modules")],
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    plugins: [
      {
        name: "checkout",
        setup(build) {
          build.onResolve({ filter: workspace }, (args) => ({
            path: join(dir, "packages", workspace.exec(args.path)[1], "src", "index.ts")
          }))
          // The route of the checkout measured, not this one's: under `fast/`, or where a checkout before it kept it.
          build.onResolve({ filter: /apps\/server\/src\/fast\/FileDataRoute\.ts$/ }, () => {
            const moved = join(dir, "apps/server/src/fast/FileDataRoute.ts")
            return { path: existsSync(moved) ? moved : join(dir, "apps/server/src/FileDataRoute.ts") }
          })
          build.onResolve({ filter: /^better-sqlite3$/ }, () => ({
            path: join(dir, "packages/sqlite/node_modules/better-sqlite3/lib/index.js"),
            external: true
          }))
        }
      }
    ]
  })
  return outfile
}

const kinds = [
  { name: "filedata", script: await bundle(root) },
  ...(against === undefined ? [] : [{ name: `filedata at ${against}`, script: await bundle(resolve(against)) }]),
  { name: "baseline", script: join(root, "bench/lib/route-baseline.mjs") }
]
for (const kind of kinds) kind.figures = []
for (let round = 0; round < rounds; round++) {
  for (const kind of round % 2 === 0 ? kinds : [...kinds].reverse()) {
    const run = spawnSync(process.execPath, [kind.script, db, requests, runs, level], {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 2 ** 30
    })
    if (run.status !== 0) {
      console.error(`${kind.name}: ${run.stderr}`)
      process.exit(1)
    }
    // The figures are the last line that is not a log line.
    const figures = run.stdout
      .trim()
      .split("\n")
      .findLast((line) => line.startsWith("["))
    kind.figures.push(...JSON.parse(figures))
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}
const baseline = median(kinds.at(-1).figures)
console.log(`\nCPU a request in process (µs), ${requests} requests a run, ${rounds} rounds of ${runs} runs\n`)
console.log("| handler | median | range | against the baseline |")
console.log("|---|---:|---:|---:|")
for (const kind of kinds) {
  const value = median(kind.figures)
  const range = `${Math.min(...kind.figures).toFixed(2)} to ${Math.max(...kind.figures).toFixed(2)}`
  console.log(`| ${kind.name} | ${value.toFixed(2)} | ${range} | ${(value / baseline).toFixed(2)}x |`)
}
