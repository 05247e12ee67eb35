/**
 * Vitest's global setup: brings the build up to date once, before any test file runs, as `pnpm start` does
 * before a start. Tests that run the built apps as processes then find `dist` current, and no two test
 * files build at the same time.
 *
 * @since 0.1.0
 */
import { spawn } from "node:child_process"
import { finish, root } from "./Processes.js"

/**
 * `node scripts/run.mjs --build-only`; fails the run with the bundler's output if the build fails.
 *
 * @since 0.1.0
 * @category setup
 */
export const setup = async (): Promise<void> => {
  const result = await finish(
    spawn(process.execPath, ["scripts/run.mjs", "--build-only"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
  )
  if (result.code !== 0) throw new Error(`The build failed:\n${result.stdout}${result.stderr}`)
}
