// `pnpm pack` (and publish) of a package under packages/ runs this first: the package's dist/ is removed and
// built again with `tsc -b`, so the tarball holds exactly what its sources compile to today, never a file
// left from a module since removed.
import { execFileSync } from "node:child_process"
import { rmSync } from "node:fs"
import { createRequire } from "node:module"

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
rmSync("dist", { recursive: true, force: true })
execFileSync(process.execPath, [tsc, "-b", "tsconfig.json"], { stdio: "inherit" })
