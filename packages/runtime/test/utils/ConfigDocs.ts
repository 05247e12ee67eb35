// The README's configuration table and the variables a `Config` reads, for the tests that compare them.

import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as ConfigProvider from "effect/ConfigProvider"

export interface Row {
  readonly variable: string
  readonly fallback: string | undefined
  readonly cliOnly: boolean
}

const code = (cell: string): string | undefined => /^`([^`]*)`$/.exec(cell.trim())?.[1]

/** The rows of the table under `### Configuration` in the README. */
export const readmeRows = (): ReadonlyArray<Row> => {
  const readme = readFileSync(fileURLToPath(new URL("../../../../README.md", import.meta.url)), "utf8")
  const section = readme.slice(readme.indexOf("### Configuration"))
  const table = section.slice(section.indexOf("| variable"))
  return table
    .split("\n")
    .filter((line, i, lines) => line.startsWith("|") && lines.slice(0, i).every((before) => before.startsWith("|")))
    .slice(2)
    .map((line) => {
      const [variable = "", fallback = "", meaning = ""] = line.slice(1, -1).split(" | ")
      return {
        variable: code(variable) ?? variable.trim(),
        fallback: code(fallback),
        cliOnly: meaning.trim().startsWith("CLI only")
      }
    })
}

/** A provider of `env` that notes the name of every variable asked for, present or not. */
export const notingProvider = (env: Record<string, string>) => {
  const asked = new Set<string>()
  const base = ConfigProvider.fromMap(new Map(Object.entries(env))).flattened
  const provider = ConfigProvider.fromFlat(
    ConfigProvider.makeFlat({
      load: (path, primitive, split) => {
        asked.add(path.join("."))
        return base.load(path, primitive, split)
      },
      enumerateChildren: base.enumerateChildren,
      patch: base.patch
    })
  )
  return { asked, provider }
}
