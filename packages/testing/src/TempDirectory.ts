/**
 * Temporary directories for the files a test writes: databases, fixture files.
 *
 * @since 0.1.0
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"

/**
 * A fresh directory `filedata-PREFIX-…` under the system temp dir, left in place (the system cleans it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (prefix: string): string => mkdtempSync(join(tmpdir(), `filedata-${prefix}-`))

/**
 * A fresh directory `filedata-PREFIX-…` under the system temp dir, removed when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scoped = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => make(prefix)),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/**
 * Writes `content` (a string as is, anything else as JSON) to `dir/name` and returns the path.
 *
 * @since 0.1.0
 * @category files
 */
export const write = (dir: string, name: string, content: unknown): string => {
  const path = join(dir, name)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content))
  return path
}
