// Runs a TypeScript example of the docs, saved anywhere: `node scripts/example.mjs FILE.ts`. esbuild bundles it
// with `@filedata/*` taken from the packages' sources (no build needed, as scripts/bundle.mjs does) and the other
// packages the examples import (effect, standardwebhooks) from apps/server's dependencies; node then runs it in
// the current directory. apps/server/test/DocsExamples.test.ts runs the docs' `ts runnable` blocks this way.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const [file, ...args] = process.argv.slice(2)
if (file === undefined) {
  console.error("usage: node scripts/example.mjs FILE.ts [ARGS...]")
  process.exit(2)
}

const alias = Object.fromEntries(
  readdirSync(join(root, "packages"))
    .filter((name) => existsSync(join(root, "packages", name, "src/index.ts")))
    .map((name) => [`@filedata/${name}`, join(root, "packages", name, "src/index.ts")])
)
const dir = mkdtempSync(join(tmpdir(), "filedata-example-"))
const outfile = join(dir, "example.mjs")
try {
  await esbuild.build({
    entryPoints: [resolve(file)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    alias,
    nodePaths: [join(root, "apps/server/node_modules")],
    // CommonJS modules inside the bundle call require for Node's built-in modules.
    banner: {
      js: 'import { createRequire as __exampleRequire } from "node:module";\nconst require = __exampleRequire(import.meta.url);'
    },
    logLevel: "error"
  })
} catch {
  process.exit(1)
}
const run = spawnSync(process.execPath, [outfile, ...args], { stdio: "inherit" })
rmSync(dir, { recursive: true, force: true })
process.exit(run.status ?? 1)
