/**
 * The synchronous rule, stated once: a port member (or a writer) that can answer at once returns an
 * {@link Immediate}, built with this module's constructors, and is then stepped in the caller's stack with no
 * fiber; anything else is a plain effect and runs on Effect's runtime, unchanged. `fn` runs a use case's
 * generator that way while every step it yields is already evaluated, and hands the rest to the runtime at the
 * first that is not. For adapter authors: docs/embedding.md#answering-at-once; the figures:
 * docs/performance.md#immediate-path.
 *
 * @since 0.2.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type { YieldWrap } from "effect/Utils"
import * as Utils from "effect/Utils"

declare const ImmediateBrand: unique symbol

/**
 * An effect that may already be evaluated: an `Exit` when its answer was there at once, else an effect that goes
 * on later. A type only (nothing is allocated for it): what a member's signature says it may answer, made by
 * {@link succeed}, {@link fail}, {@link die}, {@link fromExit}, or {@link later} for the part that waits.
 *
 * @since 0.2.0
 * @category models
 */
export type Immediate<A, E = never, R = never> = Effect.Effect<A, E, R> & { readonly [ImmediateBrand]: true }

/**
 * An answer there at once.
 *
 * @since 0.2.0
 * @category constructors
 */
export const succeed = <A>(value: A): Immediate<A> => Exit.succeed(value) as unknown as Immediate<A>

/**
 * No answer, there at once.
 *
 * @since 0.2.0
 * @category constructors
 */
const void_: Immediate<void> = Exit.void as unknown as Immediate<void>

export { void_ as void }

/**
 * A failure known at once.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fail = <E>(error: E): Immediate<never, E> => Exit.fail(error) as unknown as Immediate<never, E>

/**
 * A defect known at once.
 *
 * @since 0.2.0
 * @category constructors
 */
export const die = (defect: unknown): Immediate<never> => Exit.die(defect) as unknown as Immediate<never>

/**
 * An `Exit` as an answer there at once.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromExit = <A, E>(exit: Exit.Exit<A, E>): Immediate<A, E> => exit as unknown as Immediate<A, E>

/**
 * An effect that answers later, where a member could also answer at once: it runs on the runtime.
 *
 * @since 0.2.0
 * @category constructors
 */
export const later = <A, E, R>(effect: Effect.Effect<A, E, R>): Immediate<A, E, R> =>
  effect as unknown as Immediate<A, E, R>

/**
 * Whether the answer is there: an `Exit`, to read now, rather than an effect to run.
 *
 * @since 0.2.0
 * @category guards
 */
export const isDone = <A, E, R>(self: Effect.Effect<A, E, R>): self is Exit.Exit<A, E> => Exit.isExit(self)

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
    if (!isDone(effect)) return Effect.flatMap(effect, (next) => step(iterator, next))
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
  ): ((...args: Args) => Immediate<A, ErrorOf<Eff>, ContextOf<Eff>>) =>
  (...args) =>
    step(body(...args) as Iterator<Yielded, unknown, unknown>, undefined) as Immediate<A, ErrorOf<Eff>, ContextOf<Eff>>

/**
 * `Effect.map` that keeps an already evaluated effect evaluated.
 *
 * @since 0.2.0
 * @category mapping
 */
export const map = <A, E, R, B>(self: Effect.Effect<A, E, R>, f: (a: A) => B): Immediate<B, E, R> =>
  (isDone(self) ? Exit.map(self, f) : Effect.map(self, f)) as Immediate<B, E, R>

/**
 * `Effect.mapError` that keeps an already evaluated effect evaluated.
 *
 * @since 0.2.0
 * @category error handling
 */
export const mapError = <A, E, R, E2>(self: Effect.Effect<A, E, R>, f: (e: E) => E2): Immediate<A, E2, R> =>
  (isDone(self) ? Exit.mapError(self, f) : Effect.mapError(self, f)) as Immediate<A, E2, R>

/**
 * `Effect.flatMap` that keeps an already evaluated effect evaluated when `f` gives one.
 *
 * @since 0.2.0
 * @category sequencing
 */
export const flatMap = <A, E, R, B, E2, R2>(
  self: Effect.Effect<A, E, R>,
  f: (a: A) => Effect.Effect<B, E2, R2>
): Immediate<B, E | E2, R | R2> => {
  if (!isDone(self)) return later(Effect.flatMap(self, f))
  return (Exit.isSuccess(self) ? f(self.value) : self) as Immediate<B, E | E2, R | R2>
}

/**
 * `Effect.either` that keeps an already evaluated effect evaluated: a failure as `Left`, a defect as it was.
 *
 * @since 0.2.0
 * @category error handling
 */
export const either = <A, E, R>(self: Effect.Effect<A, E, R>): Immediate<Either.Either<A, E>, never, R> => {
  if (!isDone(self)) return later(Effect.either(self))
  if (Exit.isSuccess(self)) return succeed(Either.right(self.value))
  return Either.match(Cause.failureOrCause(self.cause), {
    onLeft: (failure) => succeed(Either.left(failure)),
    onRight: (cause) => fromExit(Exit.failCause(cause))
  })
}
