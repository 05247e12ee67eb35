// Bundles each app's entry from the TypeScript sources (`apps/APP/src/main.ts`, the workspace's packages from
// their own `src/`) into `apps/APP/dist/bundle/main.js`: one ES module with what it imports, tree-shaken, plus a
// chunk for each part it imports only on demand (the PostgreSQL and Redis adapters). Loading some 800 files one
// by one was most of the start-up (docs/performance.md#bundled-entries). esbuild only strips the types, so a
// bundle takes about a second where `tsc -b` took a dozen; checking the types is `pnpm typecheck`'s job.
// `scripts/run.mjs` calls it; `node scripts/bundle.mjs` runs it alone.
import { existsSync, readdirSync, rmSync } from "node:fs"
import { dirname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/** The apps bundled: each one's entry, and where its bundle goes. */
export const apps = {
  server: { entry: "apps/server/src/main.ts", outdir: "apps/server/dist/bundle" },
  cli: { entry: "apps/cli/src/main.ts", outdir: "apps/cli/dist/bundle" }
}

// Drivers stay in node_modules, loaded as they are without the bundle: better-sqlite3 finds its native addon
// next to its own files, and pg and ioredis are only loaded with their adapters. pnpm links a package only
// into the packages that depend on it, so each import is rewritten to the file it resolves to from its
// importer, relative to the bundle.
const drivers = /^(better-sqlite3|pg|ioredis)(\/.*)?$/

// The workspace's packages export their tsc output (`dist/`); the bundle takes their sources instead.
const workspacePackage = /^@filedata\/([\w-]+)$/

const plugin = (outdir) => ({
  name: "filedata-resolve",
  setup(build) {
    build.onResolve({ filter: workspacePackage }, (args) => {
      const source = join(root, "packages", workspacePackage.exec(args.path)[1], "src", "index.ts")
      return existsSync(source) ? { path: source } : undefined
    })
    build.onResolve({ filter: drivers }, async (args) => {
      if (args.pluginData === "resolving") return undefined
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: "resolving"
      })
      if (resolved.errors.length > 0) return { errors: resolved.errors }
      const path = relative(join(root, outdir), resolved.path).split(sep).join("/")
      return { path: path.startsWith(".") ? path : `./${path}`, external: true }
    })
  }
})

/** Bundles one app; removes what an earlier bundle left that this one did not write. */
export const bundleApp = async (name) => {
  const { entry, outdir } = apps[name]
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { main: entry },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Every package here is side-effect free where it says so; esbuild drops what nothing uses (fast-check,
    // which effect/Schema imports only for arbitraries, and undici, imported by the platform's HTTP client).
    treeShaking: true,
    chunkNames: "chunk-[hash]",
    // Stack traces in the TypeScript sources' terms: node --enable-source-maps.
    sourcemap: "linked",
    sourcesContent: false,
    // CommonJS modules inside the bundle call require for Node's built-in modules.
    banner: {
      js: 'import { createRequire as __filedataRequire } from "node:module";\nconst require = __filedataRequire(import.meta.url);'
    },
    plugins: [plugin(outdir)],
    metafile: true,
    logLevel: "warning"
  })
  const written = new Set(Object.keys(result.metafile.outputs).map((path) => join(root, path)))
  for (const file of readdirSync(join(root, outdir))) {
    if (!written.has(join(root, outdir, file))) rmSync(join(root, outdir, file), { force: true, recursive: true })
  }
  return result
}

/** Bundles every app. */
export const bundleAll = async () => {
  for (const name of Object.keys(apps)) await bundleApp(name)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await bundleAll()
