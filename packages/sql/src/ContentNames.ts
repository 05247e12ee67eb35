/**
 * Each file's content names in the order the file first received them, kept in `content_names (file_id,
 * position, name, seq)` (`SharedTables`) so that an export writes its CSV header without a pass over the submissions. Imports
 * and appends add the names their submissions bring in their own transaction (a rolled-back one adds none);
 * `seq` is a submission of the transaction that brought the name, so a reader bounded by a read point sees the
 * names of exactly the submissions it sees.
 *
 * @since 0.2.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { ExportEncoder } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"

// Rows per multi-row insert: four bound values each, far below both engines' limits.
const INSERT_BATCH = 500

/**
 * The names an import or an append brings, by the position of their file in the document's `$.files`, each
 * file's in order of first appearance with its position among them; and each submission's CSV row
 * (`ExportEncoder.StoredCsvRow`) under those positions, which are the file's own unless it already had names
 * ({@link plan}).
 *
 * @since 0.2.0
 * @category models
 */
export interface Collector {
  /** Adds the names of one submission's content (JSON text of an object), in their order; its CSV row. */
  readonly add: (file: number, createdDate: string, contentJson: string) => ExportEncoder.StoredCsvRow
  readonly byFile: ReadonlyMap<number, ReadonlyMap<string, number>>
}

/**
 * An empty {@link Collector}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const collector = (): Collector => {
  const byFile = new Map<number, Map<string, number>>()
  return {
    byFile,
    add: (file, createdDate, contentJson) => {
      let names = byFile.get(file)
      if (names === undefined) {
        names = new Map()
        byFile.set(file, names)
      }
      // A `for in` over the parsed object: its own keys in the stored text's order, `__proto__` included.
      const content = JSON.parse(contentJson) as Record<string, string>
      for (const name in content) if (!names.has(name)) names.set(name, names.size)
      return ExportEncoder.storedCsvRow(createdDate, content, names) as ExportEncoder.StoredCsvRow
    }
  }
}

interface NameRow {
  readonly file_id: string
  readonly position: number | string
  readonly name: string
}

/**
 * What a write adds to `content_names` (`rows`, each file's new names after its own), and the files in the
 * document whose submissions' CSV rows were made under other positions than the file's (`restage`, by index in
 * `$.files`, with every position of the file's names): an append to a file that had names, or a file named twice.
 *
 * @since 0.2.0
 * @category models
 */
export interface Plan {
  readonly rows: ReadonlyArray<readonly [file: string, position: number, name: string]>
  readonly restage: ReadonlyMap<number, ReadonlyMap<string, number>>
}

/**
 * The {@link Plan} of `collected`, inside the transaction that writes it, before its submissions are copied.
 *
 * @since 0.2.0
 * @category writing
 */
export const plan = (
  sql: SqlClient.SqlClient,
  files: ReadonlyArray<{ readonly id: string; readonly index: number }>,
  collected: Collector
): Effect.Effect<Plan, SqlError> =>
  Effect.gen(function* () {
    // A file may be named by more than one entry of an append: its names in document order.
    const ordered = [...files].sort((a, b) => a.index - b.index)
    const ids = [...new Set(ordered.filter((file) => collected.byFile.has(file.index)).map((file) => file.id))]
    const positions = new Map<string, Map<string, number>>()
    for (const batch of Arr.chunksOf(ids, INSERT_BATCH)) {
      const rows = yield* sql<NameRow>`SELECT file_id, position, name FROM content_names
        WHERE ${sql.in("file_id", batch)} ORDER BY file_id, position`
      for (const row of rows) {
        const names = positions.get(row.file_id) ?? new Map<string, number>()
        names.set(row.name, Number(row.position))
        positions.set(row.file_id, names)
      }
    }
    const rows: Array<readonly [string, number, string]> = []
    const restage = new Map<number, ReadonlyMap<string, number>>()
    for (const file of ordered) {
      const local = collected.byFile.get(file.index)
      if (local === undefined) continue
      let names = positions.get(file.id)
      if (names === undefined) {
        names = new Map()
        positions.set(file.id, names)
      }
      for (const name of local.keys()) {
        if (names.has(name)) continue
        rows.push([file.id, names.size, name])
        names.set(name, names.size)
      }
      for (const [name, at] of local) {
        if (names.get(name) !== at) {
          restage.set(file.index, names)
          break
        }
      }
    }
    return { rows, restage }
  })

/**
 * Writes the names of a {@link plan}, inside its transaction, once its submissions are copied: `seq` is the
 * highest of the table, one of those submissions.
 *
 * @since 0.2.0
 * @category writing
 */
export const record = (
  sql: SqlClient.SqlClient,
  int8: (value: number | string) => Statement.Fragment,
  planned: Plan
): Effect.Effect<void, SqlError> =>
  Effect.gen(function* () {
    if (planned.rows.length === 0) return
    const [top] = yield* sql<{ readonly seq: number | string }>`SELECT max(seq) AS seq FROM submissions`
    const seq = top?.seq ?? 0
    yield* insert(
      sql,
      int8,
      planned.rows.map(([id, position, name]) => [id, position, name, seq] as const)
    )
  })

const insert = (
  sql: SqlClient.SqlClient,
  int8: (value: number | string) => Statement.Fragment,
  rows: ReadonlyArray<readonly [file: string, position: number, name: string, seq: number | string]>
): Effect.Effect<void, SqlError> =>
  Effect.forEach(
    Arr.chunksOf(rows, INSERT_BATCH),
    (batch) =>
      sql`INSERT INTO content_names (file_id, position, name, seq) VALUES ${sql.csv(
        batch.map(([file, position, name, seq]) => sql`(${file}, ${position}, ${name}, ${int8(seq)})`)
      )}`,
    { discard: true }
  )
