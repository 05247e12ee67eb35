// One version story: no declaration of a publishable package says it is newer than the package
// (docs/embedding.md, Versioning). `pnpm pack:check` checks the same on the packed declarations.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"

const packagesDir = new URL("../../", import.meta.url).pathname
const compare = (left: string, right: string): number => {
  const [a, b] = [left, right].map((text) => text.split(".").map(Number)) as [Array<number>, Array<number>]
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0)
  return 0
}
const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name))

const publishable = readdirSync(packagesDir)
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(packagesDir, dir, "package.json"), "utf8")) }))
  .filter(({ manifest }) => manifest.private !== true)

describe("versions", () => {
  it("every publishable package has the same version", () => {
    expect(new Set(publishable.map(({ manifest }) => manifest.version)).size).toBe(1)
  })

  it.each(publishable.map(({ dir, manifest }) => [manifest.name as string, dir, manifest.version as string]))(
    "no @since in %s is above its version",
    (_name, dir, version) => {
      const newer = sources(join(packagesDir, dir, "src")).flatMap((file) =>
        [...readFileSync(file, "utf8").matchAll(/@since (\d+\.\d+\.\d+)/g)]
          .filter((found) => compare(found[1] as string, version) > 0)
          .map((found) => `${file}: ${found[0]}`)
      )
      expect(newer).toEqual([])
    }
  )
})
