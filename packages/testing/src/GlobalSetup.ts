/**
 * Vitest's global setup: brings the build up to date once, before any test file runs, as `pnpm start` does
 * before a start. Tests that run the built apps as processes then find `dist` current, and no two test
 * files build at the same time.
 *
 * @since 0.1.0
 */
import { spawn } from "node:child_process"
import { accessSync, constants, mkdtempSync, rmSync, statfsSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { finish, root } from "./Processes.js"

// Memory-backed where the machine has it and no TMPDIR is set, so SQLite's commits wait on no disk. The files are
// real files all the same; no test depends on what survives a power cut.
const scratchBase = (): string => {
  if (process.env.TMPDIR) return tmpdir()
  try {
    accessSync("/dev/shm", constants.W_OK)
    const { bavail, bsize } = statfsSync("/dev/shm")
    if (bavail * bsize >= 2 * 1024 ** 3) return "/dev/shm"
  } catch {
    // no /dev/shm here: the system's temporary directory
  }
  return tmpdir()
}

/**
 * `node scripts/run.mjs --build-only`; fails the run with the bundler's output if the build fails. Then points
 * `TMPDIR` at a directory of the run's own (on `/dev/shm` when it has 2 GiB free and no `TMPDIR` is set), which
 * the workers and every process they start inherit (`os.tmpdir()` reads it), and returns its removal: the
 * databases and fixtures a run writes, some hundreds of MiB, go with it.
 *
 * @since 0.1.0
 * @category setup
 */
export const setup = async (): Promise<() => void> => {
  const result = await finish(
    spawn(process.execPath, ["scripts/run.mjs", "--build-only"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
  )
  if (result.code !== 0) throw new Error(`The build failed:\n${result.stdout}${result.stderr}`)
  const run = mkdtempSync(join(scratchBase(), "filedata-test-run-"))
  process.env.TMPDIR = run
  return () => rmSync(run, { recursive: true, force: true })
}
