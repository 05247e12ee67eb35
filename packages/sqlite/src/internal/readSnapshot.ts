import type Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import { toError } from "./followedFile.js"

// How long the reads of a connection may share one snapshot of the database (see `make`).
const SNAPSHOT_MILLIS = 1

/**
 * What a snapshot needs of a connection: its database and its prepared `BEGIN` and `COMMIT`.
 *
 * @internal
 */
export interface Transactional {
  readonly db: Database.Database
  readonly begin: Database.Statement
  readonly commit: Database.Statement
}

/**
 * The read transaction that the reads of a connection share.
 *
 * @internal
 */
export interface ReadSnapshot<C extends Transactional> {
  /** Makes the read about to run on `connection` part of the current snapshot, beginning one if needed; throws what `BEGIN` throws. */
  readonly join: (connection: C) => void
  /** Ends the snapshot now, so the next read sees every commit made so far. */
  readonly end: () => void
  /** Runs `write` with the snapshot ended before it (a reader's lock would hold it up) and after it (so the next read sees it). */
  readonly aroundWrite: <A, E, R>(write: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Stops the timer for good; the connections' owner closes them. */
  readonly close: () => void
}

/**
 * Reads share one read transaction for up to SNAPSHOT_MILLIS: beginning and ending one is where SQLite
 * takes and releases its locks, with system calls (docs/performance.md#shared-read-snapshot). Whether the
 * snapshot is too old is decided at the first read of a turn only, so the reads of one turn (a request's
 * key, file and first page) always come from one snapshot; a commit made on another connection is read from
 * the first turn that starts SNAPSHOT_MILLIS after the snapshot began. A timer ends a snapshot nobody renews,
 * so an idle server holds none (checkpoints can take the whole WAL). In WAL mode a reader never blocks
 * writers. When ending it fails, `endFailed` is told, and the connection is not used again.
 *
 * @internal
 */
export const make = <C extends Transactional>(options: {
  readonly endFailed: (connection: C, cause: Error) => void
}): ReadSnapshot<C> => {
  let transaction: C | undefined
  let began = 0
  let turnChecked = false
  let expiry: ReturnType<typeof setTimeout> | undefined

  const end = () => {
    const connection = transaction
    transaction = undefined
    if (connection === undefined || !connection.db.open || !connection.db.inTransaction) return
    try {
      connection.commit.run()
    } catch (cause) {
      options.endFailed(connection, toError(cause))
    }
  }
  const endTurn = () => {
    turnChecked = false
  }
  const expire = () => {
    expiry = undefined
    end()
  }
  const endEffect = Effect.sync(end)

  return {
    join: (connection) => {
      if (!turnChecked) {
        turnChecked = true
        queueMicrotask(endTurn)
        if (transaction !== undefined && performance.now() - began >= SNAPSHOT_MILLIS) end()
      }
      if (transaction === connection) return
      if (transaction !== undefined) end()
      connection.begin.run()
      transaction = connection
      began = performance.now()
      expiry ??= setTimeout(expire, SNAPSHOT_MILLIS).unref()
    },
    end,
    aroundWrite: (write) => Effect.ensuring(Effect.zipRight(endEffect, write), endEffect),
    close: () => {
      if (expiry !== undefined) clearTimeout(expiry)
      expiry = undefined
    }
  }
}
