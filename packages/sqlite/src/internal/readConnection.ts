import { type FileDataError, Immediate } from "@filedata/core"
import { StorageFailure } from "@filedata/sql"
import type Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as FollowedFile from "./followedFile.js"
import * as ReadSnapshot from "./readSnapshot.js"

/**
 * A read-only connection to a database file that follows the file at its path (`followedFile.ts`), its
 * reads sharing one snapshot (`readSnapshot.ts`); a read that fails drops the connection.
 *
 * @internal
 */
export interface ReadConnection<S> {
  /**
   * Runs `read` now, on the statements of a connection checked against the path in the last millisecond: its
   * answer is there at once unless the database just came back or went away (`Immediate`).
   */
  readonly read: <A>(read: (statements: S) => A) => Immediate.Immediate<A, FileDataError.StorageUnavailable>
  /** The same after checking the path now, run when the effect is. */
  readonly readChecked: <A>(read: (statements: S) => A) => Effect.Effect<A, FileDataError.StorageUnavailable>
  /** Ends the current read snapshot now, so the next read sees every commit made so far. */
  readonly endSnapshot: () => void
  /** Runs a write of this process with no read snapshot open before or after it. */
  readonly aroundWrite: <A, E, R>(write: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

const startupWait = Schedule.spaced("25 millis").pipe(Schedule.upTo("5 seconds"))

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
    const { filename } = options
    const file = yield* Effect.suspend(() => {
      const followed = FollowedFile.follow(options)
      return followed instanceof Error ? Effect.fail(followed) : Effect.succeed(followed)
    }).pipe(
      // A start that finds the file locked by another process (its checkpoint as it closes, a new file switched
      // to WAL) waits for it as the writer's connection would (busy_timeout), not the 100 ms a request waits.
      Effect.retry({ schedule: startupWait, while: FollowedFile.isLocked }),
      Effect.mapError(StorageFailure.unavailable)
    )
    const snapshot = ReadSnapshot.make<FollowedFile.Connection<S>>({ endFailed: file.lost })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        snapshot.close()
        file.close()
      })
    )

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

    const readOn =
      (connection: () => FollowedFile.Connection<S> | Error) =>
      <A>(read: (statements: S) => A): Immediate.Immediate<A, FileDataError.StorageUnavailable> => {
        const wasOpen = file.isOpen()
        const opened = connection()
        if (opened instanceof Error) return Immediate.later(refused(opened, wasOpen))
        let value: A
        try {
          snapshot.join(opened)
          value = read(opened.statements)
        } catch (cause) {
          const error = FollowedFile.toError(cause)
          file.readFailed(opened, error)
          return Immediate.later(refused(error, wasOpen))
        }
        return wasOpen
          ? Immediate.succeed(value)
          : Immediate.later(
              Effect.as(Effect.logInfo("The database is readable again").pipe(Effect.annotateLogs({ filename })), value)
            )
      }
    const readChecked = readOn(file.checkNow)

    return {
      read: readOn(file.current),
      readChecked: (read) => Effect.suspend(() => readChecked(read)),
      endSnapshot: snapshot.end,
      aroundWrite: snapshot.aroundWrite
    }
  })
