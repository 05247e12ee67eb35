#!/usr/bin/env node
// `pnpm filedata ARGS` from the repository: pnpm runs this command, linked into the root's node_modules/.bin, as
// `pnpm exec` does, which prints only what the CLI prints; a `filedata` script would add pnpm's `$ ...` echo and
// `[ELIFECYCLE] Command failed` line on every refusal. It runs `scripts/run.mjs cli` in this process, from the
// repository's root as a script would (the default DATABASE_URL is relative to it), and keeps the directory the
// command was typed in as INIT_CWD, which pnpm sets and the CLI reads a relative file path from.
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
process.env.INIT_CWD ??= process.cwd()
process.chdir(root)
const runner = join(root, "scripts", "run.mjs")
process.argv = [process.argv[0], runner, "cli", ...process.argv.slice(2)]
await import(pathToFileURL(runner).href)
