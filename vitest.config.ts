import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

// Tests run against the workspace's sources; only the tests that run the apps as processes need the build,
// which the global setup brings up to date once, before any test file.
export default defineConfig({
  resolve: {
    alias: {
      "@filedata/core": source("./packages/core/src/index.ts"),
      "@filedata/sql": source("./packages/sql/src/index.ts"),
      "@filedata/fixture": source("./packages/fixture/src/index.ts"),
      "@filedata/client": source("./packages/client/src/index.ts"),
      "@filedata/sqlite": source("./packages/sqlite/src/index.ts"),
      "@filedata/rate-limiter-memory": source("./packages/rate-limiter-memory/src/index.ts"),
      "@filedata/runtime": source("./packages/runtime/src/index.ts"),
      "@filedata/postgres": source("./packages/postgres/src/index.ts"),
      "@filedata/rate-limiter-redis": source("./packages/rate-limiter-redis/src/index.ts"),
      "@filedata/conformance": source("./packages/conformance/src/index.ts"),
      "@filedata/testing": source("./packages/testing/src/index.ts")
    }
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts"],
    globalSetup: ["./packages/testing/src/GlobalSetup.ts"],
    setupFiles: ["./vitest.setup.ts"],
    // The files of a worker share one module graph: importing Effect, the platform and the drivers once per
    // worker instead of once per file is about half the suite's CPU. Nothing of filedata's is a module-level
    // singleton; the one shared mutable object, @effect/vitest's `it`, is reset by the setup file.
    isolate: false,
    // Vitest's default on two cores is one worker, one file at a time; most files spend their time waiting on
    // real servers, processes and Redis windows, so a second worker overlaps those waits.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
