/**
 * A clock that moves only when the test moves it, and at no cost: for code that reads Effect's `Clock` many
 * thousand times per test and never sleeps. `TestClock.adjust` first waits for every other fiber to
 * suspend, which takes a few real timer turns per call.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/**
 * The clock, to provide with `Effect.withClock`, and how to move it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ManualClock {
  readonly clock: Clock.Clock
  /** Moves the time forward by `millis`. */
  readonly advance: (millis: number) => void
}

/**
 * A clock at `startMillis` (the epoch by default); anything that sleeps on it dies, since nothing wakes it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (startMillis = 0): ManualClock => {
  let now = startMillis
  const nanos = () => BigInt(now) * 1_000_000n
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => now,
    unsafeCurrentTimeNanos: nanos,
    currentTimeMillis: Effect.sync(() => now),
    currentTimeNanos: Effect.sync(nanos),
    sleep: () => Effect.dieMessage("ManualClock: nothing wakes a sleep on this clock")
  }
  return {
    clock,
    advance: (millis) => {
      now += millis
    }
  }
}
