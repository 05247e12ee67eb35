import { accessSync, constants, statSync } from "node:fs"
import type { FileDataError } from "@filedata/core"
import { StorageFailure } from "@filedata/sql"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

// A read that meets a lock waits at most this long, blocking the event loop meanwhile, then fails as
// StorageUnavailable (503) instead of holding every other request.
const BUSY_TIMEOUT_MILLIS = 100

// How often the path is compared with the open file: at most one stat (a few µs) per millisecond,
// however many requests arrive.
const CHECK_INTERVAL_MILLIS = 1

// How long the reads of this connection may share one snapshot of the database (see `inTransaction`).
const SNAPSHOT_MILLIS = 1

// After a failed open or read, requests fail at once for this long before the next attempt, so a locked
// or broken file costs one busy wait per interval, not one per request.
const RETRY_INTERVAL_MILLIS = 500

interface Lost {
  readonly _tag: "Lost"
  readonly cause: Error
  readonly retryAt: number
}

type State<S> = { readonly _tag: "Open"; readonly connection: Opened<S> } | Lost | { readonly _tag: "Closed" }

interface Opened<S> {
  readonly db: Database.Database
  readonly begin: Database.Statement
  readonly commit: Database.Statement
  readonly statements: S
  readonly dev: number
  readonly ino: number
  readonly size: number
  readonly ctimeMs: number
}

/**
 * A read-only connection to a database file that follows the file at its path: it is dropped when the
 * path stops naming the file it opened (deleted, replaced, changed in place, permissions taken away) or a
 * read fails, and opened again, with its statements prepared again, once the path names a usable database.
 *
 * @internal
 */
export interface ReadConnection<S> {
  /** Runs `read` on the statements of a connection checked against the path in the last millisecond. */
  readonly read: <A>(read: (statements: S) => A) => Effect.Effect<A, FileDataError.StorageUnavailable>
  /** The same after checking the path now. */
  readonly readChecked: <A>(read: (statements: S) => A) => Effect.Effect<A, FileDataError.StorageUnavailable>
  /** Ends the current read snapshot now, so the next read sees every commit made so far. */
  readonly endSnapshot: () => void
}

/**
 * Opens `filename` (it must exist and `prepare` must succeed on it, or this fails) and keeps following
 * it until the scope closes.
 *
 * @internal
 */
export const make = <S>(options: {
  readonly filename: string
  readonly prepare: (db: Database.Database) => S
}): Effect.Effect<ReadConnection<S>, FileDataError.StorageUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const { filename, prepare } = options

    const open = (): Opened<S> | Error => {
      // The identity is read before opening: if the path changes in between, the next check sees a
      // difference and opens again, so a race costs one extra open, never a stale connection.
      const stats = statSync(filename, { throwIfNoEntry: false })
      if (stats === undefined) return new Error(`The database file ${filename} does not exist`)
      if (!stats.isFile()) return new Error(`The database path ${filename} is not a file`)
      let db: Database.Database | undefined
      try {
        // SQLite may reuse a descriptor that a closed connection of this process left open, and so never
        // ask the system whether the file may still be read.
        accessSync(filename, constants.R_OK)
        db = new Database(filename, { readonly: true, fileMustExist: true })
        db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MILLIS}`)
        const { dev, ino, size, ctimeMs } = stats
        const begin = db.prepare("BEGIN")
        const commit = db.prepare("COMMIT")
        return { db, begin, commit, statements: prepare(db), dev, ino, size, ctimeMs }
      } catch (cause) {
        db?.close()
        return cause instanceof Error ? cause : new Error(String(cause))
      }
    }

    // Why a fresh open of the path might not read what the connection reads. A change in place (ctime, or
    // size where the clock behind ctime is coarse) counts too: in WAL mode an open connection keeps serving
    // its page cache even after the file was overwritten with garbage, while a fresh open reads and checks
    // the header. Other connections' writes reach the main file only at checkpoints, so this reopens rarely.
    const moved = (connection: Opened<S>): Error | undefined => {
      const stats = statSync(filename, { throwIfNoEntry: false })
      if (stats === undefined) return new Error(`The database file ${filename} was removed`)
      if (stats.ino !== connection.ino || stats.dev !== connection.dev) {
        return new Error(`The database file ${filename} was replaced`)
      }
      if (stats.ctimeMs !== connection.ctimeMs || stats.size !== connection.size) {
        return new Error(`The database file ${filename} changed`)
      }
      return undefined
    }

    const first = open()
    if (first instanceof Error) return yield* Effect.fail(StorageFailure.unavailable(first))
    let state: State<S> = { _tag: "Open", connection: first }
    let checkedAt = performance.now()

    // Closing the connection, not merely forgetting it, matters: SQLite shares file locks between the
    // connections of a process and defers closing a file another connection still has locked, so this is
    // the safe way to let go of a file in use (closing a descriptor of our own would release the locks of
    // every connection to it).
    const drop = (connection: Opened<S>, cause: Error, retryAt: number): Lost => {
      connection.db.close()
      const lost: Lost = { _tag: "Lost", cause, retryAt }
      state = lost
      return lost
    }

    const current = (force: boolean): Opened<S> | Error => {
      const now = performance.now()
      let lost: Lost
      switch (state._tag) {
        case "Closed":
          return new Error("The database connection is closed")
        case "Open": {
          if (!force && now - checkedAt < CHECK_INTERVAL_MILLIS) return state.connection
          checkedAt = now
          const reason = moved(state.connection)
          if (reason === undefined) return state.connection
          lost = drop(state.connection, reason, now)
          break
        }
        case "Lost":
          lost = state
      }
      if (now < lost.retryAt) return lost.cause
      const next = open()
      if (next instanceof Error) {
        state = { _tag: "Lost", cause: next, retryAt: now + RETRY_INTERVAL_MILLIS }
        return next
      }
      state = { _tag: "Open", connection: next }
      checkedAt = now
      return next
    }

    // Reads share one read transaction for up to SNAPSHOT_MILLIS: beginning and ending one is where SQLite
    // takes and releases its locks, with system calls. Measured on the small bench dataset, a request's
    // three statements cost 21 µs in a transaction of their own and 13 µs when ten requests share one; under
    // the bench's load about nine requests share each. Whether the snapshot is too old is decided at the
    // first read of a turn only, so the reads of one turn (a request's key, file and first page) always come
    // from one snapshot; a commit made on another connection is read from the first turn that starts
    // SNAPSHOT_MILLIS after the snapshot began. A timer ends a snapshot nobody renews, so an idle server
    // holds none (checkpoints can take the whole WAL). In WAL mode a reader never blocks writers.
    let transaction: Opened<S> | undefined
    let began = 0
    let turnChecked = false
    let expiry: ReturnType<typeof setTimeout> | undefined
    const endTransaction = () => {
      const connection = transaction
      transaction = undefined
      if (connection === undefined || !connection.db.open || !connection.db.inTransaction) return
      try {
        connection.commit.run()
      } catch (cause) {
        if (state._tag === "Open" && state.connection === connection) {
          drop(connection, cause instanceof Error ? cause : new Error(String(cause)), performance.now())
        }
      }
    }
    const endTurn = () => {
      turnChecked = false
    }
    const expire = () => {
      expiry = undefined
      endTransaction()
    }
    const inTransaction = (connection: Opened<S>) => {
      if (!turnChecked) {
        turnChecked = true
        queueMicrotask(endTurn)
        if (transaction !== undefined && performance.now() - began >= SNAPSHOT_MILLIS) endTransaction()
      }
      if (transaction === connection) return
      if (transaction !== undefined) endTransaction()
      connection.begin.run()
      transaction = connection
      began = performance.now()
      expiry ??= setTimeout(expire, SNAPSHOT_MILLIS).unref()
    }

    const refused = (cause: Error, wasOpen: boolean) => {
      const failure = Effect.fail(StorageFailure.unavailable(cause))
      // One warning when the database goes away, not one per refused request.
      return wasOpen
        ? Effect.zipRight(
            Effect.logWarning("The database is unavailable; reads are refused until it is back").pipe(
              Effect.annotateLogs({ filename, reason: cause.message })
            ),
            failure
          )
        : failure
    }

    const run =
      (force: boolean) =>
      <A>(read: (statements: S) => A): Effect.Effect<A, FileDataError.StorageUnavailable> =>
        Effect.suspend(() => {
          const wasOpen = state._tag === "Open"
          const connection = current(force)
          if (connection instanceof Error) return refused(connection, wasOpen)
          let value: A
          try {
            inTransaction(connection)
            value = read(connection.statements)
          } catch (cause) {
            const error = cause instanceof Error ? cause : new Error(String(cause))
            drop(connection, error, performance.now() + RETRY_INTERVAL_MILLIS)
            return refused(error, wasOpen)
          }
          return wasOpen
            ? Effect.succeed(value)
            : Effect.as(Effect.logInfo("The database is readable again").pipe(Effect.annotateLogs({ filename })), value)
        })

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (expiry !== undefined) clearTimeout(expiry)
        if (state._tag === "Open") state.connection.db.close()
        state = { _tag: "Closed" }
      })
    )

    return { read: run(false), readChecked: run(true), endSnapshot: endTransaction }
  })
