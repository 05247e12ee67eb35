// Bundles each app's entry from the TypeScript sources (`apps/APP/src/main.ts`, the workspace's packages from
// their own `src/`) into `apps/APP/dist/bundle/app.js`: one CommonJS file with what it imports, tree-shaken; what
// only some configurations need (the PostgreSQL and Redis adapters, OpenTelemetry) is evaluated on demand. Loading
// some 800 files one by one was most of the start-up (docs/performance.md#bundled-entries). Then one run of each
// app makes V8's code cache of it, which the entry beside it (`main.js`, from scripts/bundle-main.cjs) compiles
// with (docs/performance.md#code-cache). esbuild only strips the types, so a bundle takes about a second where
// `tsc -b` took a dozen; checking the types is `pnpm typecheck`'s job.
// `scripts/run.mjs` calls it; `node scripts/bundle.mjs` runs it alone.
import { spawn } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/** The apps bundled: each one's entry, where its bundle goes, and the run that makes its code cache. */
export const apps = {
  server: { entry: "apps/server/src/main.ts", outdir: "apps/server/dist/bundle", train: "start" },
  cli: { entry: "apps/cli/src/main.ts", outdir: "apps/cli/dist/bundle", train: "key list" }
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
      // Resolved as `require` resolves it: the drivers' CommonJS entries, which any Node 20 loads.
      const resolved = await build.resolve(args.path, {
        kind: "require-call",
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

// The run that makes an app's code cache, against a database of its own that is thrown away: a command that
// opens the database, or a start to the listening line and a stop. The cache holds what the run compiled.
const train = async (name) => {
  const { outdir, train: how } = apps[name]
  const dir = mkdtempSync(join(tmpdir(), "filedata-code-cache-"))
  try {
    const child = spawn(process.execPath, [join(root, outdir, "main.js"), ...(how === "start" ? [] : how.split(" "))], {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        FILEDATA_MAKE_CODE_CACHE: "1",
        DATABASE_URL: `file:${join(dir, "filedata.db")}`,
        HOST: "127.0.0.1",
        PORT: "0",
        LOG_LEVEL: "warn"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk) => {
      output += chunk
      if (how === "start" && output.includes("listening on")) child.kill("SIGTERM")
    })
    child.stderr.on("data", (chunk) => (output += chunk))
    // A run that never ends (a start that never listens) fails the build rather than hanging it.
    const stuck = setTimeout(() => child.kill("SIGKILL"), 60_000)
    const code = await new Promise((resolve, reject) => {
      child.once("error", reject)
      child.once("close", resolve)
    }).finally(() => clearTimeout(stuck))
    if (code !== 0) {
      const ending = code === null ? "was stopped after 60 s" : `exited with ${code}`
      throw new Error(`the run that makes ${name}'s code cache ${ending}:\n${output}`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Bundles one app and makes its code cache; removes what an earlier bundle left that this one did not write. */
export const bundleApp = async (name) => {
  const { entry, outdir } = apps[name]
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { app: entry },
    outdir,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    // Every package here is side-effect free where it says so; esbuild drops what nothing uses (fast-check,
    // which effect/Schema imports only for arbitraries, and undici, imported by the platform's HTTP client).
    treeShaking: true,
    // Stack traces in the TypeScript sources' terms: node --enable-source-maps.
    sourcemap: "linked",
    sourcesContent: false,
    // A script compiled with a code cache has no loader for `import()`: what the bundle imports on demand from
    // outside it (Node's modules) is required instead.
    supported: { "dynamic-import": false },
    // The sources are ES modules; the one that asks for its own URL gets the bundle's.
    define: { "import.meta.url": "__filedataImportMetaUrl" },
    banner: { js: 'const __filedataImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [plugin(outdir)],
    metafile: true,
    logLevel: "warning"
  })
  const dir = join(root, outdir)
  // The apps' packages are ES modules; their bundle directory is CommonJS, which V8's code cache works with.
  writeFileSync(join(dir, "package.json"), '{ "type": "commonjs" }\n')
  copyFileSync(join(root, "scripts", "bundle-main.cjs"), join(dir, "main.js"))
  const written = new Set([
    ...Object.keys(result.metafile.outputs).map((path) => join(root, path)),
    ...["package.json", "main.js", "app.cache"].map((file) => join(dir, file))
  ])
  for (const file of readdirSync(dir)) {
    if (!written.has(join(dir, file))) rmSync(join(dir, file), { force: true, recursive: true })
  }
  rmSync(join(dir, "app.cache"), { force: true })
  await train(name)
  return result
}

/** Bundles every app, side by side. */
export const bundleAll = async () => {
  await Promise.all(Object.keys(apps).map(bundleApp))
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await bundleAll()
