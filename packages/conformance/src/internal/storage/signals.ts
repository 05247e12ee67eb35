/**
 * The `SubmissionSignals` cases of `StorageConformance.signalsSuite`.
 *
 * @internal
 */
import { expect, it } from "@effect/vitest"
import { SubmissionSignals } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import type { MakeSignalledStorage } from "../../StorageConformance.js"
import * as Fixtures from "./fixtures.js"

// Lets the adapter's poll tick on the test clock, and its storage answer in real time, until `fiber` is done.
const settled = <A>(fiber: Fiber.RuntimeFiber<A>) =>
  Effect.gen(function* () {
    for (let round = 0; round < 200; round++) {
      const exit = yield* Fiber.poll(fiber)
      if (Option.isSome(exit)) return yield* exit.value
      yield* TestClock.adjust(50)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    return yield* Effect.dieMessage("the wait did not end")
  })

/**
 * A wait on a file's read point ends with `true` after an append, with `false` when its time is up or it is ended.
 *
 * @internal
 */
export const signals = (makeStorage: MakeSignalledStorage): void => {
  it.effect("a wait on a file's read point ends with true after an append to it", () =>
    Effect.gen(function* () {
      const signals = yield* SubmissionSignals.SubmissionSignals
      yield* Fixtures.importFiles({ f1: [], f2: [] })
      const found = Option.getOrThrow(yield* Fixtures.findFile("k1", "f1"))
      const waiting = yield* Effect.fork(
        signals.changed(Fixtures.fileId("f1"), found.readPoint, { timeoutMillis: 600_000 })
      )
      yield* Fixtures.appendTo("f1", [{ createdDate: "2024-02-01T00:00:00.000Z", content: { n: "1" } }])
      expect(yield* settled(waiting)).toBe(true)
    }).pipe(Effect.provide(makeStorage({ pageSize: 1000 })))
  )

  it.effect("a wait ends with false when its time is up or its end comes", () =>
    Effect.gen(function* () {
      const signals = yield* SubmissionSignals.SubmissionSignals
      yield* Fixtures.importFiles({ f1: [], f2: [] })
      const found = Option.getOrThrow(yield* Fixtures.findFile("k1", "f2"))
      const timed = yield* Effect.fork(signals.changed(Fixtures.fileId("f2"), found.readPoint, { timeoutMillis: 1000 }))
      expect(yield* settled(timed)).toBe(false)
      const ending = new SubmissionSignals.WaitEnd()
      const aborted = yield* Effect.fork(
        signals.changed(Fixtures.fileId("f2"), found.readPoint, { timeoutMillis: 600_000, end: ending })
      )
      ending.end()
      expect(yield* settled(aborted)).toBe(false)
    }).pipe(Effect.provide(makeStorage({ pageSize: 1000 })))
  )
}
