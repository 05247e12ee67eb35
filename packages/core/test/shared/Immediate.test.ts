import { describe, expect, it } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Immediate from "../../src/shared/Immediate.js"

class Refused extends Data.TaggedError("Refused")<{ readonly at: number }> {}

// One step of a use case: answered at once (an `Exit`) or only by the runtime, a success, a typed failure or a
// defect; or the generator throwing.
type Step =
  | { readonly kind: "now" | "later"; readonly outcome: "succeed" | "fail" | "die"; readonly value: number }
  | { readonly kind: "throw"; readonly value: number }

const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
  {
    arbitrary: FastCheck.record({
      kind: FastCheck.constantFrom("now" as const, "later" as const),
      outcome: FastCheck.constantFrom("succeed" as const, "fail" as const, "die" as const),
      value: FastCheck.integer({ min: -100, max: 100 })
    }),
    weight: 10
  },
  { arbitrary: FastCheck.record({ kind: FastCheck.constant("throw" as const), value: FastCheck.nat(100) }), weight: 1 }
)

// The same failures and defects for both runs, so their causes compare equal.
const programOf = (steps: ReadonlyArray<Step>) => {
  const failures = steps.map((_, at) => new Refused({ at }))
  const defects = steps.map((_, at) => new Error(`defect at ${at}`))
  const effectOf = (s: Step, at: number): Effect.Effect<number, Refused> => {
    if (s.kind === "throw") throw defects[at]
    const now =
      s.outcome === "succeed"
        ? Exit.succeed(s.value)
        : s.outcome === "fail"
          ? Exit.fail(failures[at] as Refused)
          : Exit.die(defects[at])
    // Only the runtime can answer this one: it waits for the scheduler first.
    return s.kind === "now" ? now : Effect.zipRight(Effect.yieldNow(), now)
  }
  return function* () {
    let total = 0
    for (let at = 0; at < steps.length; at++) total += yield* effectOf(steps[at] as Step, at)
    return total
  }
}

describe("Immediate.fn", () => {
  it.effect.prop(
    "ends as Effect.runPromiseExit ends the same program, answering at once when every step was immediate",
    { steps: FastCheck.array(step, { maxLength: 12 }) },
    ({ steps }) =>
      Effect.promise(async () => {
        const program = programOf(steps)
        const stepped = Immediate.fn(program)()
        const byRuntime = await Effect.runPromiseExit(Effect.gen(program))
        const firstLater = steps.findIndex((s) => s.kind === "later")
        const endsBefore = steps.findIndex((s) => s.kind === "throw" || (s.kind === "now" && s.outcome !== "succeed"))
        const immediate = firstLater === -1 || (endsBefore !== -1 && endsBefore < firstLater)
        expect(Exit.isExit(stepped)).toBe(immediate)
        const byStepper = Exit.isExit(stepped) ? stepped : await Effect.runPromiseExit(stepped)
        expect(Equal.equals(byStepper, byRuntime)).toBe(true)
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it("starts the body when called, not when run", () => {
    let started = 0
    const counted = Immediate.fn(function* () {
      started++
      return yield* Exit.succeed(started)
    })
    const exit = counted()
    expect(started).toBe(1)
    expect(exit).toStrictEqual(Exit.succeed(1))
  })
})

describe("Immediate.map and Immediate.mapError", () => {
  it.prop(
    "keep an evaluated effect evaluated, with Effect.map's and Effect.mapError's answers",
    { value: FastCheck.integer(), fails: FastCheck.boolean() },
    ({ value, fails }) => {
      const self: Exit.Exit<number, Refused> = fails ? Exit.fail(new Refused({ at: value })) : Exit.succeed(value)
      const moved = (refused: Refused) => new Refused({ at: refused.at + 1 })
      for (const [immediate, effect] of [
        [Immediate.map(self, (n) => n + 1), Effect.map(self, (n) => n + 1)],
        [Immediate.mapError(self, moved), Effect.mapError(self, moved)]
      ] as const) {
        expect(Exit.isExit(immediate)).toBe(true)
        expect(Equal.equals(immediate, Effect.runSyncExit(effect))).toBe(true)
      }
    }
  )
})

describe("Immediate.either", () => {
  it.prop(
    "keeps an evaluated effect evaluated, with Effect.either's answer",
    { value: FastCheck.integer(), outcome: FastCheck.constantFrom("succeed", "fail", "die") },
    ({ value, outcome }) => {
      const self: Exit.Exit<number, Refused> =
        outcome === "succeed"
          ? Exit.succeed(value)
          : outcome === "fail"
            ? Exit.fail(new Refused({ at: value }))
            : Exit.die(new Refused({ at: value }))
      const answered = Immediate.either(self)
      expect(Exit.isExit(answered)).toBe(true)
      expect(Equal.equals(answered, Effect.runSyncExit(Effect.either(self)))).toBe(true)
    }
  )
})

describe("Immediate constructors", () => {
  it.prop(
    "answer at once as Effect's own constructors answer when run; `later` is not done, with the same answer",
    { value: FastCheck.integer() },
    ({ value }) => {
      const pairs: ReadonlyArray<readonly [Effect.Effect<unknown, unknown>, Effect.Effect<unknown, unknown>]> = [
        [Immediate.succeed(value), Effect.succeed(value)],
        [Immediate.fail(new Refused({ at: value })), Effect.fail(new Refused({ at: value }))],
        [Immediate.die(new Refused({ at: value })), Effect.die(new Refused({ at: value }))],
        [Immediate.void, Effect.void],
        [Immediate.fromExit(Exit.succeed(value)), Effect.succeed(value)]
      ]
      for (const [immediate, effect] of pairs) {
        expect(Immediate.isDone(immediate)).toBe(true)
        expect(Equal.equals(immediate, Effect.runSyncExit(effect))).toBe(true)
      }
      const later = Immediate.later(Effect.sync(() => value))
      expect(Immediate.isDone(later)).toBe(false)
      expect(Effect.runSync(later)).toBe(value)
    }
  )
})
