// Runs an app of the workspace from the repository root: `node scripts/run.mjs server|cli [args...]`
// (`--build-only` just builds).
// It brings the build up to date first (tsc -b is incremental, so an unchanged tree costs about a second),
// then runs the app in this same process, so signals reach the server directly.
import { spawnSync } from "node:child_process"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const apps = { server: "apps/server/dist/main.js", cli: "apps/cli/dist/main.js" }
const [app, ...args] = process.argv.slice(2)
const entry = apps[app]
if (entry === undefined && app !== "--build-only") {
  console.error(`usage: node scripts/run.mjs ${Object.keys(apps).join("|")} [args...]`)
  process.exit(2)
}

const tsc = createRequire(join(root, "package.json")).resolve("typescript/bin/tsc")
const build = spawnSync(process.execPath, [tsc, "-b", join(root, "tsconfig.build.json")], { stdio: "inherit" })
if (build.status !== 0) {
  console.error("The build failed; see the errors above.")
  process.exit(1)
}

if (entry !== undefined) {
  process.argv = [process.argv[0], join(root, entry), ...args]
  await import(pathToFileURL(join(root, entry)).href)
}
