/**
 * Waits for a state instead of for the clock: poll until a check holds, within a bound that only a broken
 * test reaches.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

const pause = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/**
 * Calls `check` until it gives something other than `undefined`, and gives that; after `limitMillis`
 * without it, fails naming `what` (a function to say what was seen last).
 *
 * @since 0.1.0
 * @category polling
 */
export const until = async <A>(
  check: () => A | undefined | Promise<A | undefined>,
  options: { readonly what: string | (() => string); readonly limitMillis: number; readonly intervalMillis?: number }
): Promise<A> => {
  const deadline = performance.now() + options.limitMillis
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (performance.now() > deadline) {
      const what = typeof options.what === "string" ? options.what : options.what()
      throw new Error(`${what}: not within ${options.limitMillis} ms`)
    }
    await pause(options.intervalMillis ?? 10)
  }
}

/**
 * Runs `effect` until it succeeds, every `intervalMillis` (10 by default) for up to `limitMillis` of the
 * clock in use, then fails with its last failure.
 *
 * @since 0.1.0
 * @category polling
 */
export const eventually = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: { readonly limitMillis: number; readonly intervalMillis?: number }
): Effect.Effect<A, E, R> =>
  Effect.retry(effect, Schedule.spaced(options.intervalMillis ?? 10).pipe(Schedule.upTo(options.limitMillis)))

/**
 * Calls `check`, an assertion, until it returns without throwing, and gives what it returned; after
 * `limitMillis` it throws the last failure, so the test reports what was seen.
 *
 * @since 0.2.0
 * @category polling
 */
export const passes = async <A>(
  check: () => A | Promise<A>,
  options: { readonly limitMillis: number; readonly intervalMillis?: number }
): Promise<A> => {
  const deadline = performance.now() + options.limitMillis
  for (;;) {
    try {
      return await check()
    } catch (failure) {
      if (performance.now() > deadline) throw failure
    }
    await pause(options.intervalMillis ?? 10)
  }
}
