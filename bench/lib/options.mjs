// The bench scripts' command lines: `--name value` options and `--name` switches. `--help` prints the script's
// opening comment, which says what it measures and lists them; an option the script does not take, or one
// without its value, is refused (exit 2) rather than ignored, so a mistyped run measures nothing.

import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const helpOf = (script) =>
  readFileSync(fileURLToPath(script), "utf8")
    .split("\n")
    .filter((line, i, lines) => line.startsWith("//") && lines.slice(0, i).every((before) => before.startsWith("//")))
    .map((line) => line.replace(/^\/\/ ?/, ""))
    .join("\n")

/**
 * Checks the command line of the script at `script` (its `import.meta.url`) against the options it takes
 * (`names`, each followed by a value) and switches (`switches`); returns `option(name, fallback)`.
 */
export const commandLine = (script, names, switches = []) => {
  const args = process.argv.slice(2)
  if (args.includes("--help") || args.includes("-h")) {
    console.log(helpOf(script))
    process.exit(0)
  }
  for (let i = 0; i < args.length; i++) {
    const name = args[i].startsWith("--") ? args[i].slice(2) : undefined
    if (name !== undefined && switches.includes(name)) continue
    const problem =
      name === undefined || !names.includes(name)
        ? `${args[i]} is not an option of this script`
        : i + 1 === args.length
          ? `${args[i]} needs a value`
          : undefined
    if (problem !== undefined) {
      console.error(`${problem}; it takes ${[...names, ...switches].map((n) => `--${n}`).join(", ")} (--help)`)
      process.exit(2)
    }
    i++
  }
  return (name, fallback) => {
    const index = args.indexOf(`--${name}`)
    return index === -1 ? fallback : args[index + 1]
  }
}
