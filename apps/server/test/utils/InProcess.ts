// The whole service in the test's own process: the layers `main.ts` launches (`Server.service`), read from an
// environment record as the built server reads its own, on the same database, with what it writes on stdout
// kept. For the tests whose subject is not the process boundary; signals, exit codes, start-up failures and
// the bundle stay with `Processes.serve` (docs/architecture.md#testing).

import { ServiceConfig } from "@filedata/runtime"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Server from "../../src/Server.js"

// The service writes its log on process.stdout (batched lines, and `announce` through the Console). While a
// server runs here, that text goes to each running server's record instead of the test's output, as a piped
// child's stdout would.
const records = new Set<{ text: string }>()
let restore: (() => void) | undefined

const keep = (record: { text: string }): (() => void) => {
  if (records.size === 0) {
    const write = process.stdout.write
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: Array<unknown>) => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")
      for (const each of records) each.text += text
      const done = rest.find((argument) => typeof argument === "function") as (() => void) | undefined
      done?.()
      return true
    }) as typeof process.stdout.write
    restore = () => {
      process.stdout.write = write
    }
  }
  records.add(record)
  return () => {
    records.delete(record)
    if (records.size === 0) restore?.()
  }
}

// `Logging.announce` writes with `Console.log`, which vitest would take for the test's own output.
const onStdout = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.flatMap(Effect.console, (console) =>
    Effect.withConsole(effect, {
      ...console,
      log: (...args) => Effect.sync(() => void process.stdout.write(`${args.join(" ")}\n`))
    })
  )

/**
 * A service started by {@link serve}.
 */
export interface Served {
  readonly base: string
  /** What it has written on stdout so far. */
  readonly stdout: () => string
  readonly scope: Scope.CloseableScope
  readonly release: () => void
}

/**
 * The service with `env` as its whole environment (`LOG_LEVEL=warn` unless set, as `Processes.startBuilt`),
 * once it listens.
 */
export const serve = async (env: Record<string, string>): Promise<Served> => {
  const environment = { LOG_LEVEL: "warn", ...env }
  const record = { text: "" }
  const release = keep(record)
  const scope = Effect.runSync(Scope.make())
  try {
    const address = await Effect.runPromise(
      Effect.gen(function* () {
        const config = yield* ServiceConfig.config
        const context = yield* Layer.buildWithScope(Server.service(config, environment), scope)
        return Context.get(context, Server.Address)
      }).pipe(
        Effect.withConfigProvider(ConfigProvider.fromJson(environment)),
        onStdout,
        Effect.tapErrorCause(() => Scope.close(scope, Exit.void))
      )
    )
    return { base: `http://127.0.0.1:${address.port}`, stdout: () => record.text, scope, release }
  } catch (error) {
    release()
    throw error
  }
}

/**
 * Stops a service started by {@link serve} as SIGTERM does (the drain) and gives what it wrote; fails if it
 * ever wrote one of `secrets`.
 */
export const stop = async (served: Served, secrets: ReadonlyArray<string> = []): Promise<{ stdout: string }> => {
  try {
    await Effect.runPromise(onStdout(Scope.close(served.scope, Exit.void)))
  } finally {
    served.release()
  }
  const stdout = served.stdout()
  const printed = secrets.filter((secret) => stdout.includes(secret))
  if (printed.length > 0) throw new Error(`the server printed ${printed.length} secret(s)`)
  return { stdout }
}
