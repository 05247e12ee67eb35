import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

// Tests run against the workspace's sources, so no build is needed before `pnpm test`.
export default defineConfig({
  resolve: {
    alias: {
      "@filedata/core": source("./packages/core/src/index.ts"),
      "@filedata/client": source("./packages/client/src/index.ts"),
      "@filedata/sqlite": source("./packages/sqlite/src/index.ts"),
      "@filedata/rate-limiter-memory": source("./packages/rate-limiter-memory/src/index.ts"),
      "@filedata/runtime": source("./packages/runtime/src/index.ts"),
      "@filedata/postgres": source("./packages/postgres/src/index.ts"),
      "@filedata/rate-limiter-redis": source("./packages/rate-limiter-redis/src/index.ts"),
      "@filedata/conformance": source("./packages/conformance/src/index.ts")
    }
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
