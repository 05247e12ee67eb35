// The README's configuration table is the one list of every variable: it must name exactly the variables
// `ServiceConfig` reads (the CLI's own, marked "CLI only", are checked in apps/cli), with their true defaults.

import { describe, expect, it } from "@effect/vitest"
import { ServiceConfig } from "@filedata/runtime"
import * as Effect from "effect/Effect"
import { notingProvider, readmeRows } from "./utils/ConfigDocs.js"

/** Reads `ServiceConfig.config` from `env`, noting every variable it asks for. */
const readNoting = (env: Record<string, string>) => {
  const { asked, provider } = notingProvider(env)
  return Effect.map(Effect.withConfigProvider(ServiceConfig.config, provider), (config) => ({ config, asked }))
}

describe("the README's configuration table", () => {
  it.effect("lists exactly the variables ServiceConfig reads", () =>
    Effect.gen(function* () {
      const { asked } = yield* readNoting({})
      const rows = readmeRows()
      expect(rows.length).toBeGreaterThan(10)
      expect(
        rows
          .filter((row) => !row.cliOnly)
          .map((row) => row.variable)
          .sort()
      ).toEqual([...asked].sort())
    })
  )

  it.effect("gives each variable the default it has: set to its documented default, nothing changes", () =>
    Effect.gen(function* () {
      const { config: defaults } = yield* readNoting({})
      for (const row of readmeRows()) {
        if (row.cliOnly || row.fallback === undefined) continue
        const { config } = yield* readNoting({ [row.variable]: row.fallback })
        expect(config, row.variable).toEqual(defaults)
      }
    })
  )
})
