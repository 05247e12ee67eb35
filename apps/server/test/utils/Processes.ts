// The contract's commands as real processes: the launcher behind `pnpm start` and `pnpm filedata`.
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../../../..", import.meta.url))

// Every process a test started, so a test that fails halfway does not leave a server running behind it.
const started = new Set<ChildProcess>()

const tracked = (child: ChildProcess): ChildProcess => {
  started.add(child)
  child.once("exit", () => started.delete(child))
  return child
}

/** Kills whatever a test left running; call it from `afterEach`. */
export const killLeftovers = (): void => {
  for (const child of started) child.kill("SIGKILL")
  started.clear()
}

/** `node scripts/run.mjs ARGS`, as `pnpm start` / `pnpm filedata ARGS` run it. */
export const start = (args: ReadonlyArray<string>, env: Record<string, string>): ChildProcess =>
  tracked(
    spawn(process.execPath, ["scripts/run.mjs", ...args], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
  )

/** Everything a process printed, and its exit code. */
export const finish = (child: ChildProcess) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk) => (stdout += chunk))
    child.stderr?.on("data", (chunk) => (stderr += chunk))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** The base URL of the contract's `listening on` line. */
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

export const post = (base: string, body: unknown) =>
  fetch(`${base.replace("0.0.0.0", "127.0.0.1")}/api/v1/file-data`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/** Brings `dist` up to date once, as `pnpm start` does before every start; throws tsc's output if it fails. */
export const build = async (): Promise<void> => {
  const result = await finish(
    spawn(process.execPath, ["scripts/run.mjs", "--build-only"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
  )
  if (result.code !== 0) throw new Error(`The build failed:\n${result.stdout}${result.stderr}`)
}

/**
 * `node apps/APP/dist/main.js ARGS` on the current build (see `build`): no build step first, so the process
 * is the app from its first instruction and a signal reaches the app whenever it is sent.
 */
export const startBuilt = (
  app: "server" | "cli",
  args: ReadonlyArray<string>,
  env: Record<string, string>
): ChildProcess =>
  tracked(
    spawn(process.execPath, [`apps/${app}/dist/main.js`, ...args], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
  )
