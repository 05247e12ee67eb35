/**
 * The storage section of the configuration: `DATABASE_URL`, the PostgreSQL pool and the long-poll interval.
 *
 * @internal
 */
import { SubmissionSignals } from "@filedata/core"
import * as Config from "effect/Config"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import { quoted, redactUrl, variable, wholeNumber } from "./configVariables.js"

/** @internal */
export type DatabaseLocation =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted<string> }

/** @internal */
export interface DatabasePool {
  /** `DATABASE_POOL_MAX` */
  readonly max: number
  /** `DATABASE_STATEMENT_TIMEOUT_MS` */
  readonly statementTimeoutMillis: number
}

/** @internal */
export interface StorageOptions {
  readonly database: DatabaseLocation
  readonly pool?: DatabasePool | undefined
  /**
   * The longest waiting requests' files go without a look (`LONG_POLL_INTERVAL_MS`), when no signal of a commit is
   * heard; the adapter's default without it.
   */
  readonly signalIntervalMillis?: number | undefined
}

/** @internal */
export const parseDatabaseUrl = (url: string): Either.Either<DatabaseLocation, string> => {
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length)
    return path === ""
      ? Either.left(`Expected a path after file: (e.g. file:./data/filedata.db) but received ${quoted(url)}`)
      : Either.right({ _tag: "Sqlite", filename: path })
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    return URL.canParse(url)
      ? Either.right({ _tag: "Postgres", url: Redacted.make(url) })
      : Either.left(`Expected a valid postgres:// URL but received ${quoted(redactUrl(url))}`)
  }
  return Either.left(
    `Expected file:PATH (SQLite) or postgres://... (PostgreSQL) but received ${quoted(redactUrl(url))}`
  )
}

/** @internal */
export const databaseAddress = (database: DatabaseLocation): string =>
  database._tag === "Sqlite" ? `file:${database.filename}` : redactUrl(Redacted.value(database.url))

const database: Config.Config<DatabaseLocation> = variable("DATABASE_URL", parseDatabaseUrl).pipe(
  Config.withDefault<DatabaseLocation>({ _tag: "Sqlite", filename: "./data/filedata.db" })
)

/** @internal */
export const storage: Config.Config<StorageOptions> = Config.all({
  database,
  pool: Config.all({
    max: wholeNumber("DATABASE_POOL_MAX", 10, 1, 1000),
    statementTimeoutMillis: wholeNumber("DATABASE_STATEMENT_TIMEOUT_MS", 5_000, 0, 2_147_483_647)
  }),
  // At most a second, so an append by any process answers a waiting request within the contract's 1 s.
  signalIntervalMillis: wholeNumber("LONG_POLL_INTERVAL_MS", SubmissionSignals.defaultIntervalMillis, 10, 1000)
})
