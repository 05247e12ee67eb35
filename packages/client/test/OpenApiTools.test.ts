// The OpenAPI document through the tools integrators run on it, pinned in the root package.json: Redocly's
// linter with its recommended rules and @apidevtools/swagger-parser's validator, with no error and no warning.
import { spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import SwaggerParser from "@apidevtools/swagger-parser"
import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { FileDataApi } from "../src/index.js"

const spec = OpenApi.fromApi(FileDataApi.FileDataApi)

const require = createRequire(import.meta.url)
const redoclyPackage = require.resolve("@redocly/cli/package.json")
const redocly = join(dirname(redoclyPackage), require(redoclyPackage).bin.redocly)

interface LintProblem {
  readonly ruleId: string
  readonly severity: string
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer: string }>
}

describe("the OpenAPI document through outside tools", () => {
  it("passes `redocly lint` with the recommended rules: no error, no warning", () => {
    const dir = mkdtempSync(join(tmpdir(), "filedata-redocly-"))
    const file = join(dir, "openapi.json")
    writeFileSync(file, JSON.stringify(spec))
    // Run in an empty directory, so no redocly.yaml of the checkout applies; nothing sent anywhere: no usage
    // telemetry, no check for a newer release.
    const lint = spawnSync(process.execPath, [redocly, "lint", "--extends", "recommended", "--format", "json", file], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      timeout: 60_000
    })
    expect(lint.error).toBeUndefined()
    const report = JSON.parse(lint.stdout) as { totals: object; problems: ReadonlyArray<LintProblem> }
    const problems = report.problems.map(
      (problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`
    )
    expect(problems).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
    expect(lint.status, lint.stderr).toBe(0)
  }, 60_000)

  it("passes @apidevtools/swagger-parser's validate", async () => {
    // It dereferences the document in place: a copy.
    const validated = await SwaggerParser.validate(structuredClone(spec) as never)
    expect(validated.info.license).toEqual({ name: "MIT", identifier: "MIT" })
  })
})
