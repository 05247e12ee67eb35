/**
 * Runs a use case's generator in the caller's stack while every step it yields is already evaluated (an
 * `Exit`, as the in-process adapters return), and hands the rest to Effect's runtime at the first step that
 * is not: a request served in process needs no fiber, any other adapter works unchanged (docs/performance.md#immediate-path).
 *
 * @since 0.2.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type { YieldWrap } from "effect/Utils"
import * as Utils from "effect/Utils"

type Yielded = YieldWrap<Effect.Effect<unknown, unknown, unknown>>

type ErrorOf<Eff> = [Eff] extends [never]
  ? never
  : [Eff] extends [YieldWrap<Effect.Effect<unknown, infer E, unknown>>]
    ? E
    : never

type ContextOf<Eff> = [Eff] extends [never]
  ? never
  : [Eff] extends [YieldWrap<Effect.Effect<unknown, unknown, infer R>>]
    ? R
    : never

// As Effect's own runtime steps a generator: a failed step ends it, a step thrown out of it is a defect.
const step = (
  iterator: Iterator<Yielded, unknown, unknown>,
  input: unknown
): Effect.Effect<unknown, unknown, unknown> => {
  let value = input
  for (;;) {
    let state: IteratorResult<Yielded, unknown>
    let effect: Effect.Effect<unknown, unknown, unknown>
    try {
      state = iterator.next(value)
      if (state.done === true) return Exit.succeed(state.value)
      effect = Utils.yieldWrapGet(state.value)
    } catch (defect) {
      return Exit.die(defect)
    }
    if (!Exit.isExit(effect)) return Effect.flatMap(effect, (next) => step(iterator, next))
    if (Exit.isFailure(effect)) return effect
    value = effect.value
  }
}

/**
 * Like `Effect.fnUntraced`, but the body starts when the function is called: the effect returned is an `Exit`
 * when every step was one, else an effect that goes on from the first step that was not.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fn =
  <Args extends ReadonlyArray<unknown>, Eff extends Yielded, A>(
    body: (...args: Args) => Generator<Eff, A, never>
  ): ((...args: Args) => Effect.Effect<A, ErrorOf<Eff>, ContextOf<Eff>>) =>
  (...args) =>
    step(body(...args) as Iterator<Yielded, unknown, unknown>, undefined) as Effect.Effect<
      A,
      ErrorOf<Eff>,
      ContextOf<Eff>
    >

/**
 * `Effect.map` that keeps an already evaluated effect evaluated.
 *
 * @since 0.2.0
 * @category mapping
 */
export const map = <A, E, R, B>(self: Effect.Effect<A, E, R>, f: (a: A) => B): Effect.Effect<B, E, R> =>
  Exit.isExit(self) ? Exit.map(self as Exit.Exit<A, E>, f) : Effect.map(self, f)

/**
 * `Effect.flatMap` that keeps an already evaluated effect evaluated when `f` gives one.
 *
 * @since 0.2.0
 * @category sequencing
 */
export const flatMap = <A, E, R, B, E2, R2>(
  self: Effect.Effect<A, E, R>,
  f: (a: A) => Effect.Effect<B, E2, R2>
): Effect.Effect<B, E | E2, R | R2> => {
  if (!Exit.isExit(self)) return Effect.flatMap(self, f)
  const exit = self as Exit.Exit<A, E>
  return Exit.isSuccess(exit) ? f(exit.value) : (exit as Exit.Exit<never, E>)
}

/**
 * `Effect.either` that keeps an already evaluated effect evaluated: a failure as `Left`, a defect as it was.
 *
 * @since 0.2.0
 * @category error handling
 */
export const either = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<Either.Either<A, E>, never, R> => {
  if (!Exit.isExit(self)) return Effect.either(self)
  const exit = self as Exit.Exit<A, E>
  if (Exit.isSuccess(exit)) return Exit.succeed(Either.right(exit.value))
  return Either.match(Cause.failureOrCause(exit.cause), {
    onLeft: (failure) => Exit.succeed(Either.left(failure)),
    onRight: (cause) => Exit.failCause(cause)
  })
}
