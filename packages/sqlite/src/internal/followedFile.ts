import { accessSync, constants, statSync } from "node:fs"
import Database from "better-sqlite3"

// A read that meets a lock waits at most this long, blocking the event loop meanwhile, then fails as
// StorageUnavailable (503) instead of holding every other request.
const BUSY_TIMEOUT_MILLIS = 100

// How often the path is compared with the open file: at most one stat (a few µs) per millisecond,
// however many requests arrive.
const CHECK_INTERVAL_MILLIS = 1

// After a failed open or read, requests fail at once for this long before the next attempt, so a locked
// or broken file costs one busy wait per interval, not one per request.
const RETRY_INTERVAL_MILLIS = 500

/**
 * A read-only connection to the file at the path, with its prepared statements and the identity the file
 * had when it was opened.
 *
 * @internal
 */
export interface Connection<S> {
  readonly db: Database.Database
  readonly begin: Database.Statement
  readonly commit: Database.Statement
  readonly statements: S
  readonly dev: number
  readonly ino: number
  readonly size: number
  readonly ctimeMs: number
}

interface Lost {
  readonly _tag: "Lost"
  readonly cause: Error
  readonly retryAt: number
}

type State<S> = { readonly _tag: "Open"; readonly connection: Connection<S> } | Lost | { readonly _tag: "Closed" }

/**
 * A connection that follows the file at its path: it is dropped when the path stops naming the file it
 * opened (deleted, replaced, changed in place, permissions taken away) or a read on it fails, and opened
 * again, with its statements prepared again, once the path names a usable database.
 *
 * @internal
 */
export interface FollowedFile<S> {
  /** The connection, compared with the path when that was last done a millisecond ago or more; or why there is none. */
  readonly current: () => Connection<S> | Error
  /** The connection compared with the path now; or why there is none. */
  readonly checkNow: () => Connection<S> | Error
  /** Whether the last access found a connection open. */
  readonly isOpen: () => boolean
  /** A read on `connection` failed: it is closed, and the path opened again only once the retry interval is over. */
  readonly readFailed: (connection: Connection<S>, cause: Error) => void
  /** `connection` failed outside a read: if it is still the current one, it is closed, and the path opened again at the next access. */
  readonly lost: (connection: Connection<S>, cause: Error) => void
  /** Closes the connection for good. */
  readonly close: () => void
}

/**
 * Any thrown value as an `Error`.
 *
 * @internal
 */
export const toError = (cause: unknown): Error => (cause instanceof Error ? cause : new Error(String(cause)))

/**
 * Whether `error` is SQLite's refusal of a lock another connection holds ("database is locked").
 *
 * @internal
 */
export const isLocked = (error: Error): boolean => {
  const { code } = error as { readonly code?: unknown }
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
}

/**
 * Opens `filename` (it must exist and `prepare` must succeed on it, or this returns why not) and follows it
 * from then on.
 *
 * @internal
 */
export const follow = <S>(options: {
  readonly filename: string
  readonly prepare: (db: Database.Database) => S
}): FollowedFile<S> | Error => {
  const { filename, prepare } = options

  const open = (): Connection<S> | Error => {
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
      return toError(cause)
    }
  }

  // Why a fresh open of the path might not read what the connection reads. A change in place (ctime, or
  // size where the clock behind ctime is coarse) counts too: in WAL mode an open connection keeps serving
  // its page cache even after the file was overwritten with garbage, while a fresh open reads and checks
  // the header. Other connections' writes reach the main file only at checkpoints, so this reopens rarely.
  const moved = (connection: Connection<S>): Error | undefined => {
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
  if (first instanceof Error) return first
  let state: State<S> = { _tag: "Open", connection: first }
  let checkedAt = performance.now()

  // Closing the connection, not merely forgetting it, matters: SQLite shares file locks between the
  // connections of a process and defers closing a file another connection still has locked, so this is
  // the safe way to let go of a file in use (closing a descriptor of our own would release the locks of
  // every connection to it).
  const drop = (connection: Connection<S>, cause: Error, retryAt: number): Lost => {
    connection.db.close()
    const lost: Lost = { _tag: "Lost", cause, retryAt }
    state = lost
    return lost
  }

  const reopen = (lost: Lost, now: number): Connection<S> | Error => {
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

  const check = (now: number): Connection<S> | Error => {
    switch (state._tag) {
      case "Closed":
        return new Error("The database connection is closed")
      case "Open": {
        checkedAt = now
        const reason = moved(state.connection)
        return reason === undefined ? state.connection : reopen(drop(state.connection, reason, now), now)
      }
      case "Lost":
        return reopen(state, now)
    }
  }

  return {
    current: () => {
      const now = performance.now()
      return state._tag === "Open" && now - checkedAt < CHECK_INTERVAL_MILLIS ? state.connection : check(now)
    },
    checkNow: () => check(performance.now()),
    isOpen: () => state._tag === "Open",
    readFailed: (connection, cause) => {
      drop(connection, cause, performance.now() + RETRY_INTERVAL_MILLIS)
    },
    lost: (connection, cause) => {
      if (state._tag === "Open" && state.connection === connection) drop(connection, cause, performance.now())
    },
    close: () => {
      if (state._tag === "Open") state.connection.db.close()
      state = { _tag: "Closed" }
    }
  }
}
