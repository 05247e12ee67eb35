/**
 * The PostgreSQL adapter as one layer: opens a connection pool, migrates the database and provides both
 * storage ports.
 *
 * @since 0.1.0
 */
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { type FileDataError, FileRepository, OperatorStore, SubmissionSignals, WebhookStore } from "@filedata/core"
import { type SqlStorage, SqlWebhookStore, StorageFailure } from "@filedata/sql"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Pg from "pg"
import * as PgFileRepository from "./PgFileRepository.js"
import * as PgMigrations from "./PgMigrations.js"
import * as PgOperatorStore from "./PgOperatorStore.js"

/**
 * Where the database lives and how the pool behaves.
 *
 * @since 0.1.0
 * @category models
 */
export interface PgStorageOptions {
  /** A `postgres://` or `postgresql://` connection URL. */
  readonly url: Redacted.Redacted<string>
  /** Connections kept open at most; defaults to {@link defaultPoolMax}. */
  readonly poolMax?: number | undefined
  /** Longest a statement may run before the server cancels it, 0 for no limit; defaults to {@link defaultStatementTimeoutMillis}. */
  readonly statementTimeoutMillis?: number | undefined
  /** Submissions read per page; defaults to {@link PgFileRepository.defaultPageSize}. */
  readonly pageSize?: number | undefined
  /**
   * How often the files of waiting requests are looked at when no notification came; defaults to
   * `SubmissionSignals.defaultIntervalMillis`.
   */
  readonly signalIntervalMillis?: number | undefined
}

/**
 * Connections kept open at most when no size is given; `DATABASE_POOL_MAX` has the same default.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPoolMax = 10

/**
 * Longest a statement may run when no limit is given; `DATABASE_STATEMENT_TIMEOUT_MS` has the same default.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultStatementTimeoutMillis = 5_000

/**
 * How long opening a connection, or waiting for a free one in a saturated pool, may take.
 *
 * @since 0.1.0
 * @category constants
 */
export const connectTimeout: Duration.Duration = Duration.seconds(5)

// pg sends `statement_timeout` from the URL as a start-up parameter of every connection it opens, so each
// pooled connection has it before its first query; the client offers no per-connection hook otherwise.
const withStatementTimeout = (url: string, millis: number): Effect.Effect<string, FileDataError.StorageUnavailable> =>
  Effect.try({
    try: () => {
      const parsed = new URL(url)
      parsed.searchParams.set("statement_timeout", String(millis))
      return parsed.toString()
    },
    // The URL may hold a password: only say that it did not parse.
    catch: () => StorageFailure.unavailable(new Error("DATABASE_URL is not a valid URL"))
  })

// The pool, kept here so the repository can run its per-request statement prepared (the `SqlClient` never
// names a statement), and the `SqlClient` over it; closed with the layer.
class Pool extends Context.Tag("@filedata/postgres/PgStorage/Pool")<Pool, Pg.Pool>() {}

const client = (options: PgStorageOptions) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const url = yield* withStatementTimeout(
        Redacted.value(options.url),
        options.statementTimeoutMillis ?? defaultStatementTimeoutMillis
      )
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() =>
          new Pg.Pool({
            connectionString: url,
            max: options.poolMax ?? defaultPoolMax,
            connectionTimeoutMillis: Duration.toMillis(connectTimeout),
            application_name: "filedata"
          }).on("error", () => {})
        ),
        (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
      )
      // One connection at once, as PgClient.layer does, so a start-up failure names the connection, not the
      // migration's transaction that met it first.
      yield* Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      })
      return Layer.merge(PgClient.layerFromPool({ acquire: Effect.succeed(pool) }), Layer.succeed(Pool, pool))
    })
  )

// After the listening connection fails, how long until it is opened again; the poll covers the gap.
const listenRetry = Duration.seconds(1)

/**
 * The `FileRepository`, `OperatorStore` and `WebhookStore` of one PostgreSQL database, migrated when the layer
 * is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: PgStorageOptions): SqlStorage.SqlStorage =>
  Layer.scopedContext(
    Effect.gen(function* () {
      yield* PgMigrations.run
      const files = yield* PgFileRepository.makeWith({
        pageSize: options.pageSize ?? PgFileRepository.defaultPageSize,
        pool: yield* Pool
      })
      const operator = yield* PgOperatorStore.make
      const webhooks = yield* SqlWebhookStore.make(PgOperatorStore.dialect)
      const signals = yield* SubmissionSignals.polled({
        changesAfter: files.changesAfter,
        position: Number,
        intervalMillis: options.signalIntervalMillis ?? SubmissionSignals.defaultIntervalMillis
      })
      // Every commit that inserts or erases submissions, by any instance or the CLI, is announced (PgMigrations):
      // it makes the poll look at once and ends `committed`. The listening connection is opened again after a
      // failure, and the poll goes on. It opens at the first wait, so a process nobody waits on (the CLI) holds no
      // connection it must close.
      const client = yield* PgClient.PgClient
      const scope = yield* Effect.scope
      const startListening = yield* Effect.once(
        Effect.forkIn(
          Stream.runForEach(client.listen(PgMigrations.submissionsChannel), () => signals.poke).pipe(
            Effect.retry(Schedule.spaced(listenRetry)),
            Effect.ignore
          ),
          scope
        )
      )
      const changed: SubmissionSignals.SubmissionSignals["changed"] = (fileId, readPoint, waitOptions) =>
        Effect.zipRight(startListening, signals.changed(fileId, readPoint, waitOptions))
      return Context.make(FileRepository.FileRepository, files).pipe(
        Context.add(OperatorStore.OperatorStore, operator),
        Context.add(WebhookStore.WebhookStore, webhooks),
        Context.add(SubmissionSignals.SubmissionSignals, {
          changed,
          committed: Effect.zipRight(startListening, signals.committed)
        })
      )
    })
  ).pipe(
    Layer.provide(client(options)),
    // A failed migration is a defect inside the Migrator; at start-up it means the same as a refused connection.
    Layer.catchAllCause((cause) => Layer.fail(StorageFailure.unavailable(Cause.squash(cause))))
  )
