/**
 * The port that tells a waiting request (`GetSubmissions` with `wait`) that its file may have changed, and the
 * delivery loop that storage may hold new webhook events: storage adapters provide it, since only storage sees
 * every append and erasure, whichever process made it. {@link polled} is the implementation both SQL adapters
 * share: one bounded poll of the read point for every waiting request at once, which an adapter's own signals (an
 * append through this process, a database notification, a cheap probe of the database) only bring forward, so a
 * lost signal delays an answer by one interval and never loses it.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { FileId } from "../shared/FileData.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import type { ReadPoint } from "../shared/FileRepository.js"

/**
 * @since 0.2.0
 * @category models
 */
export interface SubmissionSignals {
  /**
   * `true` once a submission of `fileId` stored or erased by a commit after `readPoint` (a read point
   * `findAccess` gave) may exist: at once when the adapter cannot rule it out, else when it sees one, soon after
   * the commit when a signal or probe of the adapter tells it, at the latest within its poll interval. It may say
   * so when none exists (the caller reads again and waits again). `false` once `timeoutMillis` have
   * passed (within a poll interval) or `end` ends. Waiting holds no connection and no fiber of its own;
   * interrupting it forgets the waiter.
   */
  readonly changed: (
    fileId: FileId,
    readPoint: ReadPoint,
    options: { readonly timeoutMillis: number; readonly end?: WaitEnd | undefined }
  ) => Effect.Effect<boolean>
  /**
   * Ends at the next commit the adapter sees that may have stored or erased submissions, by any process, soon
   * after it (within the adapter's signal, not its poll interval); it may end for another commit, or never when
   * the signal is lost, so the caller also waits on a timer of its own. Interrupting it forgets the waiter.
   *
   * @since 0.3.0
   */
  readonly committed: Effect.Effect<void>
}

/**
 * What ends a wait before its time: the process stopping, or the client going away. An `AbortController` at a
 * fraction of its size, since ten thousand requests may wait at once: one listener at a time.
 *
 * @since 0.2.0
 * @category models
 */
export class WaitEnd {
  #ended = false
  #listener: (() => void) | undefined = undefined
  /** Whether `end` was called. */
  get ended(): boolean {
    return this.#ended
  }
  /** Ends the wait: calls the listener, once. */
  end(): void {
    if (this.#ended) return
    this.#ended = true
    const listener = this.#listener
    this.#listener = undefined
    listener?.()
  }
  /** Calls `listener` at the end (at once, if it has ended), in place of any listener before; gives its remover. */
  listen(listener: () => void): () => void {
    if (this.#ended) {
      listener()
      return () => {}
    }
    this.#listener = listener
    return () => {
      if (this.#listener === listener) this.#listener = undefined
    }
  }
}

/**
 * @since 0.2.0
 * @category tags
 */
export const SubmissionSignals: Context.Tag<SubmissionSignals, SubmissionSignals> =
  Context.GenericTag<SubmissionSignals>("@filedata/core/SubmissionSignals")

/**
 * What one look at storage found: the files with a submission stored or erased by a commit past the position
 * asked, and the highest position seen (`undefined`: nothing was committed past it).
 *
 * @since 0.2.0
 * @category models
 */
export interface Changes {
  readonly files: ReadonlyArray<FileId>
  readonly top: number | undefined
}

/**
 * Signals from a bounded poll, and a way to look at once.
 *
 * @since 0.2.0
 * @category models
 */
export interface Polled extends SubmissionSignals {
  /** Looks at storage now rather than at the next tick: after an append through this process, or a notification. */
  readonly poke: Effect.Effect<void>
  /** How many `changed` and `committed` wait now. */
  readonly waiting: () => number
}

/**
 * A look at storage far cheaper than `changesAfter`, run every `everyMillis` while requests wait: `true` when
 * another connection may have committed since its last run, `false` when none did, at its first run, or when it
 * cannot tell (the poll's interval then bounds the delay; a waiter's arrival gets a query of its own).
 *
 * @since 0.3.0
 * @category models
 */
export interface Probe {
  readonly changed: Effect.Effect<boolean>
  readonly everyMillis: number
}

/**
 * The poll interval when none is configured (`LONG_POLL_INTERVAL_MS`): the longest a waiting request goes without
 * a look at storage when no signal is heard.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultIntervalMillis = 250

/**
 * How often an adapter's {@link Probe} runs while requests wait: a commit the adapter's own signal missed wakes
 * its waiters within about this long, plus one `changesAfter` (docs/performance.md#wake-ups-from-other-processes).
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultProbeMillis = 50

interface Waiter {
  readonly position: number
  readonly deadline: number
  readonly wake: (changed: boolean) => void
}

/**
 * Signals from one query per tick for every waiting request: `changesAfter(position)` reads which files got
 * submissions past a position (read points as numbers: `position`), and only the waiters of those files wake,
 * so a wake-up for one file costs nothing to the others. The same tick ends the waits whose time is up (on the
 * effect clock), so a waiter is a few hundred bytes and no timer. No waiter, no query and no tick. Lives as long
 * as the scope.
 *
 * With a `probe`, the poll ticks every `probe.everyMillis` and runs `changesAfter` only when the probe saw a
 * commit, a waiter arrived, or `intervalMillis` passed since the last query; without one, every `intervalMillis`.
 * A poke looks at once. `committed` waiters wake at a poke, or at a commit the probe sees while requests wait;
 * they cause no tick and no query, so a process whose delivery loop waits on them costs nothing while idle.
 *
 * @since 0.2.0
 * @category constructors
 */
export const polled = (options: {
  readonly changesAfter: (position: number) => Effect.Effect<Changes, StorageUnavailable>
  readonly position: (readPoint: ReadPoint) => number
  readonly intervalMillis: number
  readonly probe?: Probe | undefined
}): Effect.Effect<Polled, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { probe } = options
    const byFile = new Map<FileId, Set<Waiter>>()
    let count = 0
    const watchers = new Set<() => void>()
    // Every commit at or below it was looked at while each waiter now registered was already waiting, or
    // concerned none of them; a waiter whose read point is below it may have missed its commit, so it wakes at once.
    let examined = 0
    // A waiter came since the last query: the probe may have seen its commit go by before it came, so only a
    // query tells.
    let arrived = false
    let lastQuery = Number.NEGATIVE_INFINITY
    // What makes the poll look: its own timer, or a poke (`poked` says which came since the last look). One
    // queue for both, so a tick races no fibers: a tick that raced a sleep with a poke took about twice the CPU.
    const looks = yield* Queue.sliding<void>(1)
    let poked = false
    // The first waiter after an idle spell: the timer sleeps on nothing while no request waits.
    const arrivals = yield* Queue.sliding<void>(1)
    const remove = (fileId: FileId, waiter: Waiter) => {
      const waiters = byFile.get(fileId)
      if (waiters?.delete(waiter) !== true) return
      count--
      if (waiters.size === 0) byFile.delete(fileId)
    }
    const wake = (fileId: FileId) => {
      const waiters = byFile.get(fileId)
      if (waiters === undefined) return
      byFile.delete(fileId)
      count -= waiters.size
      for (const waiter of waiters) waiter.wake(true)
    }
    const wakeWatchers = () => {
      const woken = [...watchers]
      watchers.clear()
      for (const resume of woken) resume()
    }
    const expire = (now: number) => {
      for (const [fileId, waiters] of byFile) {
        for (const waiter of waiters) {
          if (waiter.deadline > now) continue
          remove(fileId, waiter)
          waiter.wake(false)
        }
      }
    }
    const query = Effect.suspend(() => {
      // Commits below every waiter's read point concern none of them: after an idle spell the poll starts there.
      let lowest = Number.POSITIVE_INFINITY
      for (const waiters of byFile.values()) for (const { position } of waiters) lowest = Math.min(lowest, position)
      const from = Math.max(examined, lowest)
      examined = from
      return Effect.match(options.changesAfter(from), {
        // Storage did not answer: the next tick asks again, and the waits end by their own deadline meanwhile.
        onFailure: () => undefined,
        onSuccess: ({ files, top }) => {
          if (top !== undefined && top > examined) examined = top
          for (const fileId of files) wake(fileId)
        }
      })
    })

    const tick = (wasPoked: boolean) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        expire(now)
        if (count === 0) return
        const seen = wasPoked || (probe !== undefined && (yield* probe.changed))
        if (seen) wakeWatchers()
        if (probe !== undefined && !seen && !arrived && now - lastQuery < options.intervalMillis) return
        arrived = false
        lastQuery = now
        yield* query
      })

    const timer = Effect.zipRight(
      Effect.sleep(probe?.everyMillis ?? options.intervalMillis),
      Effect.sync(() => Queue.unsafeOffer(looks, undefined))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.suspend(() => (count === 0 ? Queue.take(arrivals) : timer))))
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Queue.take(looks),
          Effect.suspend(() => {
            const wasPoked = poked
            poked = false
            return tick(wasPoked)
          })
        )
      )
    )

    return {
      changed: (fileId, readPoint, { end, timeoutMillis }) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.async<boolean>((resume) => {
            const position = options.position(readPoint)
            if (!(position >= examined)) return resume(Effect.succeed(true))
            if (timeoutMillis <= 0 || end?.ended === true) return resume(Effect.succeed(false))
            const waiter: Waiter = {
              position,
              deadline: now + timeoutMillis,
              wake: (changed) => {
                unlisten?.()
                resume(Effect.succeed(changed))
              }
            }
            const unlisten = end?.listen(() => {
              remove(fileId, waiter)
              resume(Effect.succeed(false))
            })
            let waiters = byFile.get(fileId)
            if (waiters === undefined) {
              waiters = new Set()
              byFile.set(fileId, waiters)
            }
            waiters.add(waiter)
            if (count++ === 0) Queue.unsafeOffer(arrivals, undefined)
            arrived = true
            return Effect.sync(() => {
              unlisten?.()
              remove(fileId, waiter)
            })
          })
        ),
      committed: Effect.async<void>((resume) => {
        const watcher = () => resume(Effect.void)
        watchers.add(watcher)
        return Effect.sync(() => {
          watchers.delete(watcher)
        })
      }),
      poke: Effect.sync(() => {
        wakeWatchers()
        poked = true
        Queue.unsafeOffer(looks, undefined)
      }),
      waiting: () => count + watchers.size
    }
  })
