/**
 * The contract's commands as real processes, started from the repository root: the launcher behind
 * `pnpm start` and `pnpm filedata`, and the built apps themselves, for what only a process shows (signals, exit
 * codes, start-up, the bundle); the server's other tests run it in their own process. The build is brought up to
 * date once, before any test file runs (`GlobalSetup`).
 *
 * @since 0.1.0
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/**
 * The repository's root directory.
 *
 * @since 0.1.0
 * @category paths
 */
export const root = fileURLToPath(new URL("../../..", import.meta.url))

// Every process a test started, so a test that fails halfway does not leave a server running behind it.
const started = new Set<ChildProcess>()

/**
 * Kills whatever a test left running; call it from `afterEach`.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const killLeftovers = (): void => {
  for (const child of started) child.kill("SIGKILL")
  started.clear()
}

/**
 * `node ARGS` from the repository root with `env` over this process's environment, stdout and stderr piped
 * (not terminals); killed by `killLeftovers` if still running.
 *
 * @since 0.1.0
 * @category processes
 */
export const node = (args: ReadonlyArray<string>, env: Record<string, string> = {}): ChildProcess => {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  started.add(child)
  child.once("exit", () => started.delete(child))
  return child
}

/**
 * `node scripts/run.mjs ARGS`, as `pnpm start` / `pnpm filedata ARGS` run it, logging warnings only.
 *
 * @since 0.1.0
 * @category processes
 */
export const start = (args: ReadonlyArray<string>, env: Record<string, string>): ChildProcess =>
  node(["scripts/run.mjs", ...args], { LOG_LEVEL: "warn", ...env })

/**
 * The built entry of an app, relative to the root: its bundle, which `pnpm start` and `pnpm filedata` run, so
 * the tests run what ships (docs/performance.md#bundled-entries).
 *
 * @since 0.1.0
 * @category paths
 */
export const builtEntry = (app: "server" | "cli"): string => `apps/${app}/dist/bundle/main.js`

/**
 * `node apps/APP/dist/bundle/main.js ARGS` on the current build: no build step first, so the process is the
 * app from its first instruction and a signal reaches the app whenever it is sent.
 *
 * @since 0.1.0
 * @category processes
 */
export const startBuilt = (
  app: "server" | "cli",
  args: ReadonlyArray<string>,
  env: Record<string, string>
): ChildProcess => node([builtEntry(app), ...args], { LOG_LEVEL: "warn", ...env })

/**
 * Everything a process printed, and its exit code.
 *
 * @since 0.1.0
 * @category processes
 */
export const finish = (child: ChildProcess) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk) => (stdout += chunk))
    child.stderr?.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/**
 * The base URL of the contract's `listening on` line.
 *
 * @since 0.1.0
 * @category processes
 */
export const listening = (child: ChildProcess) =>
  new Promise<string>((resolve, reject) => {
    let stdout = ""
    child.stdout?.on("data", (chunk) => {
      stdout += chunk
      const match = /listening on (http:\/\/\S+)/.exec(stdout)
      if (match?.[1] !== undefined) resolve(match[1])
    })
    child.on("close", (code) => reject(new Error(`exited with ${code} before listening: ${stdout}`)))
  })

/**
 * `POST /api/v1/file-data` with `body` as JSON, to the server at `base`.
 *
 * @since 0.1.0
 * @category requests
 */
export const post = (base: string, body: unknown) =>
  fetch(`${base.replace("0.0.0.0", "127.0.0.1")}/api/v1/file-data`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/**
 * A built server started by {@link serve}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Served {
  readonly base: string
  readonly child: ChildProcess
  /** Its exit, with everything it printed. */
  readonly closed: Promise<{ code: number | null; stdout: string; stderr: string }>
  /** What it has printed on stdout so far. */
  readonly stdout: () => string
}

/**
 * The built server started with `env`, once it has written its listening line.
 *
 * @since 0.1.0
 * @category processes
 */
export const serve = async (env: Record<string, string>): Promise<Served> => {
  const child = startBuilt("server", [], env)
  let stdout = ""
  child.stdout?.on("data", (chunk) => (stdout += chunk))
  const closed = finish(child)
  return { base: await listening(child), child, closed, stdout: () => stdout }
}

/**
 * Stops a server started by {@link serve} as a process manager does (SIGTERM) and waits for its exit; fails
 * unless it exits 0 without ever printing one of `secrets`.
 *
 * @since 0.1.0
 * @category processes
 */
export const stop = async (
  { child, closed }: Served,
  secrets: ReadonlyArray<string> = []
): Promise<{ code: number | null; stdout: string; stderr: string }> => {
  child.kill("SIGTERM")
  const exit = await closed
  if (exit.code !== 0) throw new Error(`the server exited with ${exit.code}: ${exit.stderr}`)
  const printed = secrets.filter((secret) => (exit.stdout + exit.stderr).includes(secret))
  if (printed.length > 0) throw new Error(`the server printed ${printed.length} secret(s)`)
  return exit
}
