// The documented commands, `pnpm start` and `pnpm filedata`, stopped the way process managers stop them: the
// signal goes to pnpm, not to node. pnpm runs a script through `sh -c`; unless the script replaces that shell
// (`exec`), the shell dies of the signal, pnpm exits 143 and its reaper kills the server with replies in flight.
// Real processes throughout: the pinned pnpm (skipped, saying why, where there is none), the built server, a
// reply too big for the socket buffers held half-read while the signal arrives.

import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { connect as tcpConnect } from "node:net"
import { tmpdir } from "node:os"
import { basename, delimiter, join } from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Fixtures, Processes, SqliteFiles } from "@filedata/testing"
import * as TestServer from "./utils/TestServer.js"

const { finish, killLeftovers, root } = Processes
const { connect } = SqliteFiles
const { bulkFile } = Fixtures

const KEY = "start-command-test-key-51c0"

/** The pnpm running this test (`npm_execpath`), else the first on PATH; how to run it, or why there is none. */
const findPnpm = (): { readonly command: ReadonlyArray<string> } | { readonly missing: string } => {
  const candidates = [
    ...(process.env.npm_execpath !== undefined && basename(process.env.npm_execpath).startsWith("pnpm")
      ? [process.env.npm_execpath]
      : []),
    ...(process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, "pnpm"))
  ]
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK)
    } catch {
      continue
    }
    // pnpm installed by npm is a script for node; the standalone one is an executable of its own.
    return { command: /\.[cm]?js$/.test(candidate) ? [process.execPath, candidate] : [candidate] }
  }
  return { missing: "no pnpm found (npm_execpath, PATH); install the pinned one as .ci/run does" }
}

const pnpm = findPnpm()
const hasScript = spawnSync("script", ["--version"]).status === 0
const skipped = "missing" in pnpm ? pnpm.missing : undefined
if (skipped !== undefined) console.warn(`Start command tests SKIPPED: ${skipped}`)

// The pnpm running the tests may be another version than the pinned one: it must run the script itself, not
// look for the pinned version to switch to.
const pnpmEnv = { npm_config_manage_package_manager_versions: "false", COREPACK_ENABLE_STRICT: "0" }

const readdirOrNothing = (path: string): Array<string> => {
  try {
    return readdirSync(path)
  } catch {
    return []
  }
}

// Every thread's children: pnpm starts its scripts from a thread other than its main one.
const childrenOf = (pid: number): Array<number> =>
  readdirOrNothing(`/proc/${pid}/task`).flatMap((task) => {
    try {
      const listed = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim()
      return listed === "" ? [] : listed.split(" ").map(Number)
    } catch {
      return []
    }
  })

const descendants = (pid: number): Array<number> => [pid, ...childrenOf(pid).flatMap(descendants)]

// pnpm puts the script in a process group of its own: a test that fails halfway kills the whole tree.
const started = new Set<ChildProcess>()
afterEach(() => {
  for (const child of started) {
    for (const pid of child.pid === undefined ? [] : descendants(child.pid)) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Gone already.
      }
    }
  }
  started.clear()
  killLeftovers()
})

/**
 * `pnpm ARGS` from the repository root, as an operator types it: in its own session (`setsid`, as systemd
 * and Docker start it), in the caller's, or under a terminal of its own (`script`, as an interactive shell or
 * `docker run -t`). Returns the child to signal (pnpm itself, also under a terminal), and its output and exit.
 */
const runPnpm = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  how: "own session" | "caller's session" | "terminal"
) => {
  if ("missing" in pnpm) throw new Error(pnpm.missing)
  const [command, ...prefix] = pnpm.command as [string, ...Array<string>]
  const options = {
    cwd: root,
    env: { ...process.env, ...pnpmEnv, LOG_LEVEL: "warn", ...env },
    stdio: ["pipe", "pipe", "pipe"] as Array<"pipe">,
    detached: how === "own session"
  }
  const quoted = [command, ...prefix, ...args].map((word) => `'${word}'`).join(" ")
  const child =
    how === "terminal"
      ? spawn("script", ["--quiet", "--return", "--flush", "--command", `exec ${quoted}`, "/dev/null"], options)
      : spawn(command, [...prefix, ...args], options)
  started.add(child)
  const closed = finish(child)
  let stdout = ""
  child.stdout?.on("data", (chunk) => (stdout += chunk))
  const listening = () =>
    new Promise<number>((resolve, reject) => {
      const check = () => {
        const match = /listening on http:\/\/[^\s:]+:(\d+)/.exec(stdout)
        if (match?.[1] !== undefined) resolve(Number(match[1]))
      }
      check()
      child.stdout?.on("data", check)
      void closed.then((exit) =>
        reject(new Error(`exited with ${exit.code} before listening: ${exit.stdout}${exit.stderr}`))
      )
    })
  // Under a terminal the child is `script`; pnpm is its only child (`exec` replaced the shell).
  const pnpmPid = (): number =>
    how === "terminal" ? (childrenOf(child.pid as number)[0] as number) : (child.pid as number)
  return { child, closed, listening, pnpmPid }
}

/** Resolves once a new connection to `port` is refused: the server has the signal and is draining. */
const refused = async (port: number) => {
  for (;;) {
    const outcome = await new Promise<string>((resolve) => {
      const socket = tcpConnect(port, "127.0.0.1")
      socket.once("connect", () => {
        socket.destroy()
        resolve("connected")
      })
      socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"))
    })
    if (outcome === "ECONNREFUSED") return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * A request for the big file whose reply is not read past its header fields until `resume`: the server's
 * writes stall on full socket buffers, so the reply is in flight whatever happens meanwhile.
 */
const heldReply = (port: number) => {
  let resume = () => {}
  let gotHeaders = () => {}
  const headers = new Promise<void>((resolve) => (gotHeaders = resolve))
  const done = new Promise<{ readonly complete: boolean; readonly text: string }>((resolve) => {
    const chunks: Array<Buffer> = []
    const end = (complete: boolean) => resolve({ complete, text: Buffer.concat(chunks).toString("utf8") })
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      path: "/api/v1/file-data",
      method: "POST",
      agent: false,
      headers: { "content-type": "application/json" }
    })
    req.on("error", () => end(false))
    req.on("response", (res) => {
      res.pause()
      resume = () => res.resume()
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => end(true))
      res.on("error", () => end(false))
      res.on("close", () => end(res.complete))
      gotHeaders()
    })
    req.end(JSON.stringify({ fileId: "big", apiKey: KEY }))
  })
  return { headers, done, resume: () => resume() }
}

const SUBMISSIONS = 1_200

const expectWhole = (reply: { readonly complete: boolean; readonly text: string }) => {
  expect(reply.complete).toBe(true)
  expect(JSON.parse(reply.text).submissions).toHaveLength(SUBMISSIONS)
}

describe.skipIf(skipped !== undefined)(
  "pnpm start and pnpm filedata, stopped by a signal to pnpm (real processes)",
  () => {
    // About 12 MB of reply: three times what the loopback's socket buffers hold.
    let env: Record<string, string> = {}
    beforeAll(async () => {
      const dir = mkdtempSync(join(tmpdir(), "filedata-start-"))
      const fixture = {
        users: [{ id: "u", apiKeys: [KEY] }],
        files: [
          {
            id: "big",
            userId: "u",
            name: "Big",
            creationDate: "2024-01-01T00:00:00.000Z",
            submissions: Array.from({ length: SUBMISSIONS }, (_, i) => ({
              createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
              content: { text: "x".repeat(10_000) }
            }))
          }
        ]
      }
      env = { DATABASE_URL: `file:${join(dir, "filedata.db")}`, PORT: "0", HOST: "127.0.0.1" }
      await TestServer.importInto(env, fixture)
    }, 180_000)

    /** Starts `pnpm start`, holds a big reply half-read, sends `signals` to pnpm one by one, then reads on. */
    const stopWhileReplying = async (
      how: "own session" | "caller's session" | "terminal",
      signals: ReadonlyArray<NodeJS.Signals | "Ctrl-C">
    ) => {
      const run = runPnpm(["start"], env, how)
      const port = await run.listening()
      const reply = heldReply(port)
      await reply.headers
      for (const [i, signal] of signals.entries()) {
        // Ctrl-C: the terminal sends SIGINT to its foreground process group, which is pnpm's.
        if (signal === "Ctrl-C") run.child.stdin?.write("\x03")
        else process.kill(run.pnpmPid(), signal)
        if (i === 0) await refused(port)
      }
      reply.resume()
      expectWhole(await reply.done)
      const exit = await run.closed
      expect(exit.code, exit.stdout + exit.stderr).toBe(0)
    }

    it("in its own session, as a process manager runs it: SIGTERM drains the reply in flight, exit 0; a second SIGTERM during the drain changes nothing", async () => {
      await stopWhileReplying("own session", ["SIGTERM", "SIGTERM"])
    }, 60_000)

    it("in the caller's session: SIGINT drains the reply in flight, exit 0", async () => {
      await stopWhileReplying("caller's session", ["SIGINT"])
    }, 60_000)

    it.skipIf(!hasScript)(
      `under a terminal (docker run -t, a shell): SIGTERM drains the reply in flight, exit 0; Ctrl-C meanwhile changes nothing${hasScript ? "" : " (skipped: no `script` command to give it a terminal)"}`,
      async () => {
        await stopWhileReplying("terminal", ["SIGTERM", "Ctrl-C"])
      },
      60_000
    )

    it("pnpm filedata import, stopped halfway: nothing written, exit 143 (128 + SIGTERM)", async () => {
      const dir = mkdtempSync(join(tmpdir(), "filedata-start-cli-"))
      const database = join(dir, "filedata.db")
      const fixture = join(dir, "fixture.json")
      writeFileSync(
        fixture,
        JSON.stringify({
          users: [{ id: "u", apiKeys: [KEY] }],
          files: [bulkFile(100_000, 2)].map((file) => ({ ...file, userId: "u" }))
        })
      )
      const run = runPnpm(["filedata", "import", fixture], { DATABASE_URL: `file:${database}` }, "own session")
      let exited = false
      void run.closed.then(() => (exited = true))
      // Halfway: the CLI has the file open, which it has only while it reads it (Linux's /proc shows it).
      const reading = () =>
        descendants(run.child.pid as number).some((pid) =>
          readdirOrNothing(`/proc/${pid}/fd`).some((fd) => {
            try {
              return readlinkSync(`/proc/${pid}/fd/${fd}`) === fixture
            } catch {
              return false
            }
          })
        )
      while (!reading() && !exited) await new Promise((resolve) => setTimeout(resolve, 10))
      process.kill(run.pnpmPid(), "SIGTERM")
      const exit = await run.closed
      expect(exit.code, exit.stdout + exit.stderr).toBe(143)
      const db = connect(database, { readonly: true })
      try {
        expect(db.prepare("SELECT count(*) AS n FROM users").all()).toEqual([{ n: 0 }])
        expect(db.prepare("SELECT count(*) AS n FROM submissions").all()).toEqual([{ n: 0 }])
      } finally {
        db.close()
      }
    }, 60_000)
  }
)
