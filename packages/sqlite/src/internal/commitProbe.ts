import type { SubmissionSignals } from "@filedata/core"
import type Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as FollowedFile from "./followedFile.js"

/**
 * The poll's probe on SQLite (docs/performance.md#wake-ups-from-other-processes): `PRAGMA data_version` on a
 * read-only connection of its own, which changes whenever another connection, of any process, committed a change
 * to the file, for about a microsecond and no row read. Its own connection, outside the readers' shared snapshot,
 * so it never answers from a snapshot older than the commit. Opened at the first look, so a process nobody waits
 * on (the CLI) opens nothing, and following the path as the reader does; a connection opened again counts as a
 * change (the first only takes the baseline), and one that cannot be had answers `false`, leaving the poll's
 * interval to bound the delay.
 *
 * @internal
 */
export const make = (
  filename: string,
  everyMillis: number
): Effect.Effect<SubmissionSignals.Probe, never, Scope.Scope> =>
  Effect.gen(function* () {
    let file: FollowedFile.FollowedFile<Database.Statement> | undefined
    let last: { readonly connection: object; readonly version: unknown } | undefined
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        file?.close()
      })
    )
    const changed = Effect.sync(() => {
      // A path that could not be opened is tried again at the next look.
      if (file === undefined) {
        const followed = FollowedFile.follow({ filename, prepare: (db) => db.prepare("PRAGMA data_version").pluck() })
        if (followed instanceof Error) return false
        file = followed
      }
      const connection = file.current()
      if (connection instanceof Error) return false
      let version: unknown
      try {
        version = connection.statements.get()
      } catch (cause) {
        file.readFailed(connection, FollowedFile.toError(cause))
        last = undefined
        return false
      }
      // The first look only takes the baseline: the poll's waiters that came meanwhile get a query anyway.
      const seen = last !== undefined && (last.connection !== connection || last.version !== version)
      last = { connection, version }
      return seen
    })
    return { changed, everyMillis }
  })
