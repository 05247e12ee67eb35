/**
 * Vitest's setup file, run before each test file. The test files share one module graph per worker
 * (`isolate: false` in vitest.config.ts), and `@effect/vitest`'s `layer` assigns its own `effect` and `scoped`
 * onto the `it` object every file imports (its `Object.assign(it, …)` in `internal.ts`): a later file's plain
 * `it.effect` would then run in the earlier file's layer, without `TestClock`. Each file starts from the
 * methods `@effect/vitest` made at load.
 */
import { it } from "@effect/vitest"

const key = Symbol.for("filedata/vitest.setup/pristine")
const store = globalThis as { [key]?: Partial<typeof it> }
store[key] ??= {
  effect: it.effect,
  scoped: it.scoped,
  live: it.live,
  scopedLive: it.scopedLive,
  flakyTest: it.flakyTest,
  layer: it.layer,
  prop: it.prop
}
Object.assign(it, store[key])
