// The bench scripts' command lines (bench/lib/options.mjs), as a user types them: `--help` prints what a script
// measures and takes, before it does anything; an option it does not take, or one without its value, is refused.

import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Processes } from "@filedata/testing"

const scripts = readdirSync(join(Processes.root, "bench"))
  .filter((name) => name.endsWith(".mjs"))
  .filter((name) => readFileSync(join(Processes.root, "bench", name), "utf8").includes("./lib/options.mjs"))

const run = (args: ReadonlyArray<string>) => Processes.finish(Processes.node(args))

describe("the bench scripts' command lines (real processes)", () => {
  it("--help prints each script's opening comment with its options, and exits 0", async () => {
    expect(scripts.length).toBeGreaterThanOrEqual(11)
    const helps = await Promise.all(scripts.map((name) => run([`bench/${name}`, "--help"])))
    for (const [i, help] of helps.entries()) {
      const name = scripts[i] ?? ""
      const opening = readFileSync(join(Processes.root, "bench", name), "utf8")
        .split("\n")[0]
        ?.replace(/^\/\/ /, "")
      expect(help, name).toMatchObject({ code: 0, stderr: "" })
      expect(help.stdout.split("\n")[0], name).toBe(opening)
      expect(help.stdout, name).toMatch(/--[a-z]/)
    }
  }, 60_000)

  it("refuses an option the script does not take, or one without its value, with exit 2", async () => {
    const [unknown, valueless] = await Promise.all([
      run(["bench/run.mjs", "--bogus", "1"]),
      run(["bench/run.mjs", "--rounds"])
    ])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/^--bogus is not an option of this script; it takes --profiles, /)
    expect(valueless.code).toBe(2)
    expect(valueless.stderr).toMatch(/^--rounds needs a value; /)
    expect(unknown.stdout + valueless.stdout).toBe("")
  }, 60_000)
})
