import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

// The files that take longest, longest first. Vitest orders files by the durations it cached on an earlier run
// and, on a fresh clone, by size, which put these last (the conformance suites are a few lines that run for
// seconds): the second worker then waited idle for the first to finish them.
const longest = [
  "packages/postgres/test/Conformance.test.ts",
  "apps/server/test/Faults.test.ts",
  "apps/cli/test/ConcurrentImports.test.ts",
  "apps/server/test/DocsExamples.test.ts",
  "apps/server/test/Fuzz.test.ts",
  "packages/sqlite/test/Conformance.test.ts",
  "apps/cli/test/ImportKill.test.ts",
  "packages/fixture/test/FixtureReader.test.ts",
  "apps/server/test/WebhookDelivery.test.ts",
  "apps/server/test/Telemetry.test.ts",
  "apps/cli/test/Process.test.ts",
  "packages/rate-limiter-redis/test/Conformance.test.ts",
  "apps/server/test/Export.test.ts",
  "packages/sqlite/test/SqliteFileRepository.test.ts"
]

class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const rank = (file: TestSpecification) => {
      const at = longest.findIndex((path) => file.moduleId.endsWith(path))
      return at === -1 ? longest.length : at
    }
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}

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
      "@filedata/webhooks-node": source("./packages/webhooks-node/src/index.ts"),
      "@filedata/conformance": source("./packages/conformance/src/index.ts"),
      "@filedata/testing": source("./packages/testing/src/index.ts")
    }
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts"],
    globalSetup: ["./packages/testing/src/GlobalSetup.ts"],
    setupFiles: ["./vitest.setup.ts"],
    // The files of a worker share one module graph: importing Effect, the platform and the drivers once per
    // worker instead of once per file took a third of the suite's CPU off. What a module keeps is then kept from
    // file to file: @effect/vitest's `it`, which its `layer` changes, is reset by the setup file, and the
    // files that start processes kill what a test left running (`Processes.killLeftovers`).
    isolate: false,
    sequence: { sequencer: LongestFirst },
    // Vitest's default on two cores is one worker, one file at a time; most files spend their time waiting on
    // real servers, processes and Redis windows, so three workers overlap those waits (two: 93 s, three: 86 to
    // 89 s here). As many at least as at most: a pool that shrinks ends the run with "Terminating worker thread".
    maxWorkers: 3,
    minWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
