// Runs an app of the workspace from the repository root: `node scripts/run.mjs server|cli [args...]`
// (`--build-only` just builds).
// It brings the build up to date first (skipped when nothing changed since the last build, see below): each app's
// entry bundled from the TypeScript sources (scripts/bundle.mjs; no type check, that is `pnpm typecheck`'s); then
// it runs the app's bundle in this same process, so signals reach the server directly.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const apps = { server: "apps/server/dist/bundle/main.js", cli: "apps/cli/dist/bundle/main.js" }
const [app, ...args] = process.argv.slice(2)
const entry = apps[app]
if (entry === undefined && app !== "--build-only") {
  console.error(`usage: node scripts/run.mjs ${Object.keys(apps).join("|")} [args...]`)
  process.exit(2)
}

// Loading esbuild and bundling take about a second. A stamp records the start of the last build that succeeded;
// while nothing a build reads is newer (sources, directories too so a deleted file counts, each tsconfig and
// package.json, the shared configuration, the lockfile, the bundler's script) and every bundle is still there,
// the build is skipped. A failed build removes the stamp.
const stamp = join(root, "node_modules", ".cache", "filedata", "build-succeeded")

const newestUnder = (path) => {
  const stats = statSync(path)
  if (!stats.isDirectory()) return stats.mtimeMs
  let newest = stats.mtimeMs
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestUnder(join(path, entry)))
  return newest
}

const projects = JSON.parse(readFileSync(join(root, "tsconfig.build.json"), "utf8")).references.map(({ path }) =>
  join(root, path)
)

const upToDate = () => {
  const built = statSync(stamp, { throwIfNoEntry: false })
  const bundles = Object.values(apps).flatMap((entry) => [entry, join(dirname(entry), "app.js")])
  if (built === undefined || !bundles.every((bundle) => existsSync(join(root, bundle)))) return false
  const inputs = [
    ...[
      "tsconfig.base.json",
      "tsconfig.build.json",
      "package.json",
      "pnpm-lock.yaml",
      "scripts/bundle.mjs",
      "scripts/bundle-main.cjs"
    ].map((file) => join(root, file)),
    ...projects.flatMap((project) => ["src", "tsconfig.json", "package.json"].map((entry) => join(project, entry)))
  ]
  return inputs.every((input) => newestUnder(input) < built.mtimeMs)
}

if (!upToDate()) {
  const began = new Date()
  try {
    rmSync(stamp, { force: true })
  } catch {
    // Nothing to remove, or nothing that could have been written: the build decides alone.
  }
  // Imported only when building: loading esbuild would cost every start.
  const { bundleAll } = await import("./bundle.mjs")
  try {
    await bundleAll()
  } catch {
    console.error("Bundling failed; see the errors above.")
    process.exit(1)
  }
  try {
    mkdirSync(dirname(stamp), { recursive: true })
    writeFileSync(stamp, "")
    utimesSync(stamp, began, began)
  } catch {
    // Where node_modules cannot be written, every start simply bundles again.
  }
}

if (entry !== undefined) {
  process.argv = [process.argv[0], join(root, entry), ...args]
  await import(pathToFileURL(join(root, entry)).href)
}
