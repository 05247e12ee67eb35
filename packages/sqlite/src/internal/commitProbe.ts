import { type FSWatcher, watch } from "node:fs"
import type { SubmissionSignals } from "@filedata/core"
import type Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as FollowedFile from "./followedFile.js"

/**
 * How this process hears of other processes' commits to a SQLite file
 * (docs/performance.md#wake-ups-from-other-processes).
 *
 * @internal
 */
export interface CommitProbe {
  /**
   * `PRAGMA data_version` on a read-only connection of its own, which changes whenever another connection, of any
   * process, committed a change to the file, for about a microsecond and no row read. Its own connection, outside
   * the readers' shared snapshot, so it never answers from a snapshot older than the commit. Opened at the first
   * look, so a process nobody waits on (the CLI) opens nothing, and following the path as the reader does; a
   * connection opened again counts as a change (the first only takes the baseline), and one that cannot be had
   * answers `false`, leaving the poll's interval to bound the delay.
   */
  readonly probe: SubmissionSignals.Probe
  /**
   * Calls `onWrite` whenever the file's WAL is written, which a commit does (inotify and the like: nothing runs
   * while nothing is written). Started at the first call and kept until the scope closes; after the WAL is
   * removed or replaced, or when it cannot be watched, the next call tries again, and meanwhile the probe and the
   * poll still see every commit, later.
   */
  readonly watch: (onWrite: () => void) => void
}

/**
 * The probe and the WAL's watch of `filename`.
 *
 * @internal
 */
export const make = (filename: string, everyMillis: number): Effect.Effect<CommitProbe, never, Scope.Scope> =>
  Effect.gen(function* () {
    let file: FollowedFile.FollowedFile<Database.Statement> | undefined
    let last: { readonly connection: object; readonly version: unknown } | undefined
    let watcher: FSWatcher | undefined
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        file?.close()
        watcher?.close()
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
    const stop = () => {
      watcher?.close()
      watcher = undefined
    }
    return {
      probe: { changed, everyMillis },
      watch: (onWrite) => {
        if (watcher !== undefined) return
        try {
          // Not persistent: the watch never keeps a process alive that has nothing else to do.
          watcher = watch(`${filename}-wal`, { persistent: false }, (event) => {
            onWrite()
            // Another file at the path from now on: the next wait watches it.
            if (event === "rename") stop()
          }).on("error", stop)
        } catch {
          // No WAL to watch yet; the next wait tries again.
        }
      }
    }
  })
