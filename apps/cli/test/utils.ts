import { spawn, spawnSync } from "node:child_process"
import { join } from "node:path"
import { format } from "node:util"
import type * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { FileData, FileRepository, OperatorStore, type WebhookStore } from "@filedata/core"
import { Storage } from "@filedata/runtime"
import { Processes, TempDirectory } from "@filedata/testing"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Color from "../src/Color.js"
import * as Commands from "../src/Commands.js"
import * as Program from "../src/Program.js"
import * as Progress from "../src/Progress.js"
import * as Stdin from "../src/Stdin.js"
import * as Stdout from "../src/Stdout.js"

/** A fresh directory under the system temp dir, removed when the scope closes. */
export const tempDir = TempDirectory.scoped("cli")

/** Writes `content` (a string as is, anything else as JSON) to `dir/name` and returns the path. */
export const writeFixture = TempDirectory.write

/** The SQLite layer the runtime selects for a `file:` URL, on a file of its own. */
export const sqlite = (filename: string) => Storage.layer({ database: { _tag: "Sqlite", filename } })

/**
 * Runs `body` with a real SQLite database in a temp directory, NodeContext and a configuration read only
 * from `env`, so the developer's environment (INIT_CWD when run through pnpm) cannot leak in.
 */
export const withDatabase = <A, E>(
  body: (
    dir: string
  ) => Effect.Effect<
    A,
    E,
    OperatorStore.OperatorStore | FileRepository.FileRepository | WebhookStore.WebhookStore | NodeContext.NodeContext
  >,
  env: Record<string, string> | ((dir: string) => Record<string, string>) = {}
) =>
  Effect.scoped(
    Effect.flatMap(tempDir, (dir) =>
      body(dir).pipe(
        Effect.provide(Layer.merge(sqlite(join(dir, "filedata.db")), NodeContext.layer)),
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map(Object.entries(typeof env === "function" ? env(dir) : env)))
        )
      )
    )
  )

/** What one CLI run printed and how it ended. */
export interface Run {
  readonly exit: Exit.Exit<void, unknown>
  readonly stdout: ReadonlyArray<string>
  readonly stderr: ReadonlyArray<string>
}

const capture = Effect.map(Effect.console, (base) => {
  const stdout: Array<string> = []
  const stderr: Array<string> = []
  const line = (args: ReadonlyArray<unknown>) => args.map(String).join(" ")
  const console: Console.Console = {
    ...base,
    log: (...args) => Effect.sync(() => void stdout.push(line(args))),
    info: (...args) => Effect.sync(() => void stdout.push(line(args))),
    error: (...args) => Effect.sync(() => void stderr.push(line(args))),
    warn: (...args) => Effect.sync(() => void stderr.push(line(args))),
    unsafe: {
      ...base.unsafe,
      log: (...args) => void stdout.push(line(args)),
      info: (...args) => void stdout.push(line(args)),
      error: (...args) => void stderr.push(line(args)),
      warn: (...args) => void stderr.push(line(args))
    }
  }
  return { console, stdout, stderr }
})

/** Runs `filedata ...args` on `tree` in-process, the way main does, capturing stdout and stderr by line. */
export const cliWith =
  <R, E, A>(tree: Command.Command<typeof Commands.NAME, R, E, A>) =>
  (...args: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const { console, stdout, stderr } = yield* capture
      const exit = yield* Commands.run(tree)(["node", "filedata", ...args]).pipe(
        Effect.withConsole(console),
        Effect.exit
      )
      return { exit, stdout, stderr } satisfies Run
    })

/** Runs `filedata ...args` on the tree as tests see it: storage provided from outside. */
export const cli = cliWith(Commands.command)

const access = (key: string, id: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) =>
    files.findAccess(Redacted.make(FileData.ApiKeyText.make(key)), FileData.FileId.make(id))
  )

/** The owner of a plain-text key, through the port the HTTP server authenticates with; any file will do. */
export const keyOwner = (text: string) => Effect.map(access(text, "any-file"), (found) => found.owner)

/** A stored file as a request with an active `key` finds it, without the read point the port adds. */
export const findFile = (key: string, id: string) =>
  Effect.map(access(key, id), (found) => Option.map(found.file, ({ readPoint: _, ...file }) => file))

/** A file's stored submissions, in the order the reply lists them. */
export const submissions = (id: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) =>
    Stream.runCollect(FileRepository.submissions(files, FileData.FileId.make(id)))
  ).pipe(Effect.map(Chunk.toReadonlyArray))

/** Every API key, through the operator port. */
export const allKeys = Effect.flatMap(OperatorStore.OperatorStore, (store) => store.listKeys(Option.none()))

/** Whether a user exists, through the operator port. */
export const userExists = (id: string) =>
  Effect.flatMap(OperatorStore.OperatorStore, (store) => store.userExists(FileData.UserId.make(id)))

/** What a run of the CLI printed on each stream, and its exit code, as a process's. */
export interface Finished {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * `filedata ARGS` in this process, as `runBuilt` runs it as a process: `Program.run`, the program main runs, on
 * `env` (and `LOG_LEVEL=warn`) alone, `input` as its stdin, stdout and stderr captured as text and not terminals
 * unless `terminals` says so, and the exit code main would end with. Log lines join stdout as they are logged, in
 * Effect's JSON shape, where main's batch writes them a window later.
 */
export const runInProcess = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  input = "",
  terminals: Color.Streams = { stdout: false, stderr: false }
): Promise<Finished> => {
  const stdout: Array<Buffer> = []
  const stderr: Array<Buffer> = []
  const write = (to: Array<Buffer>) => (piece: string | Uint8Array) => void to.push(Buffer.from(piece))
  const [out, err] = [write(stdout), write(stderr)]
  const all = { LOG_LEVEL: "warn", ...env }
  const streams = Layer.mergeAll(
    NodeContext.layer,
    Color.layerFor(terminals),
    Layer.succeed(Progress.ProgressTerminal, {
      isTTY: terminals.stderr,
      write: (text) => Effect.sync(() => err(text))
    }),
    Layer.succeed(Stdin.StandardInput, {
      isTTY: false,
      readLine: Effect.sync(() => (input === "" ? Option.none() : Option.some(Stdin.firstLine(input))))
    }),
    Layer.succeed(Stdout.StandardOutput, { write: (piece) => Effect.sync(() => out(piece)) })
  )
  const logging = (level: LogLevel.LogLevel) =>
    Layer.merge(
      Logger.replace(
        Logger.defaultLogger,
        Logger.make((options) => out(`${Logger.jsonLogger.log(options)}\n`))
      ),
      Logger.minimumLogLevel(level)
    )
  return Effect.runPromiseExit(
    Program.run(["node", "filedata", ...args], all, logging).pipe(
      Effect.provide(streams),
      Effect.withConsole(processConsole(out, err)),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(all)), { pathDelim: "_" }))
    )
  ).then((exit) => ({
    code: Program.exitCode(exit),
    stdout: Buffer.concat(stdout).toString("utf8"),
    stderr: Buffer.concat(stderr).toString("utf8")
  }))
}

// Node's console as a process has it: each call one line, formatted as `console.log` formats.
const processConsole = (out: (text: string) => void, err: (text: string) => void): Console.Console => {
  const line = (to: (text: string) => void) => (args: ReadonlyArray<unknown>) => to(`${format(...args)}\n`)
  const [toOut, toErr] = [line(out), line(err)]
  const base = Effect.runSync(Effect.console)
  return {
    ...base,
    log: (...args) => Effect.sync(() => toOut(args)),
    info: (...args) => Effect.sync(() => toOut(args)),
    debug: (...args) => Effect.sync(() => toOut(args)),
    error: (...args) => Effect.sync(() => toErr(args)),
    warn: (...args) => Effect.sync(() => toErr(args)),
    trace: (...args) => Effect.sync(() => toErr(args)),
    unsafe: {
      ...base.unsafe,
      log: (...args) => toOut(args),
      info: (...args) => toOut(args),
      debug: (...args) => toOut(args),
      error: (...args) => toErr(args),
      warn: (...args) => toErr(args),
      trace: (...args) => toErr(args)
    }
  }
}

/** `node ARGS` from the repository root, as `pnpm filedata` runs, with stdout and stderr piped (not terminals). */
export const runProcess = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Processes.finish(Processes.node(args, env))

/**
 * `node apps/cli/dist/bundle/main.js ARGS` on the current build (brought up to date once by the tests' global setup), with stdout and
 * stderr piped, so neither is a terminal, and `input` written to its stdin.
 */
export const runBuilt = (args: ReadonlyArray<string>, env: Record<string, string>, input = "") =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [Processes.builtEntry("cli"), ...args], {
      cwd: Processes.root,
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input)
  })

const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0

/**
 * `node apps/cli/dist/bundle/main.js ARGS` with stdout and stderr on a pseudo-terminal, through util-linux `script`;
 * `undefined` where `script` is missing. What the terminal showed comes back as one text.
 */
export const runOnTerminal = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  hasScript
    ? new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        const command = [process.execPath, Processes.builtEntry("cli"), ...args].map((arg) => `'${arg}'`).join(" ")
        const child = spawn("script", ["-qec", command, "/dev/null"], {
          cwd: Processes.root,
          env: { ...process.env, LOG_LEVEL: "warn", ...env },
          stdio: ["ignore", "pipe", "pipe"]
        })
        let output = ""
        child.stdout.on("data", (chunk) => {
          output += chunk
        })
        child.on("error", reject)
        child.on("close", (code) => resolve({ code, output }))
      })
    : undefined
