import { join } from "node:path"
import { OperatorStore, type RateLimiter } from "@filedata/core"
import { FixtureDocument } from "@filedata/fixture"
import { MemoryRateLimiter } from "@filedata/rate-limiter-memory"
import { Storage } from "@filedata/runtime"
import { SqliteStorage } from "@filedata/sqlite"
import { TempDirectory } from "@filedata/testing"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Server from "../../src/Server.js"

export const generous: RateLimiter.RateLimitPolicy = {
  apiKey: { limit: 1_000_000, windowMillis: 60_000 },
  clientAddress: { limit: 1_000_000, windowMillis: 60_000 }
}

export const httpLimits: Server.HttpLimits = {
  headersTimeoutMillis: 10_000,
  requestTimeoutMillis: 30_000,
  keepAliveTimeoutMillis: 5_000,
  maxConnections: 1_000,
  maxConnectionsPerAddress: 1_000,
  firstRequestTimeoutMillis: 5_000,
  drainTimeoutMillis: 10_000,
  sendTimeoutMillis: 30_000
}

export interface Options {
  readonly http?: Server.HttpLimits
  readonly fixture: unknown
  readonly revoke?: ReadonlyArray<string>
  readonly policy?: RateLimiter.RateLimitPolicy
  readonly trustProxy?: boolean
  /** The rate limiter; a memory limiter with `policy` by default. */
  readonly limiter?: Layer.Layer<RateLimiter.RateLimiter>
}

/**
 * A fresh SQLite file holding `fixture`, and a memory rate limiter unless `limiter` is given.
 */
export const ports = (options: Options) => {
  const storage = SqliteStorage.layer({ filename: join(TempDirectory.make("server"), "test.db") })
  const seeded = Layer.effectDiscard(
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      yield* store.importFixture(yield* FixtureDocument.decode(options.fixture))
      for (const keyId of options.revoke ?? []) yield* store.revokeKey(keyId)
    }).pipe(Effect.orDie)
  ).pipe(Layer.provideMerge(storage))
  return Layer.merge(seeded, options.limiter ?? MemoryRateLimiter.layer(options.policy ?? generous))
}

/**
 * Imports `document` into the database `env.DATABASE_URL` names, SQLite or PostgreSQL, in this process through
 * the storage port, as `filedata import` does: a test whose subject is not the CLI spares a process start.
 */
export const importInto = (env: Record<string, string>, document: unknown): Promise<void> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      yield* store.importFixture(yield* FixtureDocument.decode(document))
    }).pipe(
      Effect.provide(Storage.layerConfig.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson(env))))),
      Effect.scoped,
      Effect.orDie
    )
  )

/**
 * A SQLite database in a new temporary directory holding `document` ({@link importInto}), and the environment
 * the built apps read it with (the server on a free loopback port).
 */
export const importedDatabase = async (
  prefix: string,
  document: unknown
): Promise<{ readonly dir: string; readonly filename: string; readonly env: Record<string, string> }> => {
  const dir = TempDirectory.make(prefix)
  const filename = join(dir, "filedata.db")
  const env = { DATABASE_URL: `file:${filename}`, PORT: "0", HOST: "127.0.0.1" }
  await importInto(env, document)
  return { dir, filename, env }
}

/**
 * The real server on a free loopback port, over `ports(options)`.
 */
export const layer = (options: Options) =>
  Server.layer({
    port: 0,
    host: "127.0.0.1",
    trustProxy: options.trustProxy ?? false,
    http: options.http ?? httpLimits
  }).pipe(Layer.provideMerge(ports(options)))

export const url = (path: string) => Effect.map(Server.Address, (address) => `http://127.0.0.1:${address.port}${path}`)

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

export const request = (path: string, init?: RequestInit) =>
  Effect.flatMap(url(path), (href) =>
    Effect.promise(async (): Promise<Reply> => {
      const response = await fetch(href, init)
      const text = await response.text()
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      return { status: response.status, headers: response.headers, text, json }
    })
  )

export const postJson = (body: unknown, headers: Record<string, string> = {}, path = "/api/v1/file-data") =>
  request(path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })
