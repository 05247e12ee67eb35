/**
 * Each file's content names in the order the file first received them, kept in `content_names (file_id,
 * position, name, seq)` so that an export writes its CSV header without a pass over the submissions. Imports
 * and appends add the names their submissions bring in their own transaction (a rolled-back one adds none);
 * `seq` is a submission of the transaction that brought the name, so a reader bounded by a read point sees the
 * names of exactly the submissions it sees.
 *
 * @since 0.2.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"

// Rows per multi-row insert: four bound values each, far below both engines' limits.
const INSERT_BATCH = 500
// Submissions read per step of the backfill, so a table of a million converts in bounded memory.
const BACKFILL_BATCH = 5000

/**
 * The names an import or an append brings, by the position of their file in the document's `$.files`, each
 * file's in order of first appearance.
 *
 * @since 0.2.0
 * @category models
 */
export interface Collector {
  /** Adds the names of one submission's content (JSON text of an object), in their order. */
  readonly add: (file: number, contentJson: string) => void
  readonly byFile: ReadonlyMap<number, ReadonlySet<string>>
}

/**
 * An empty {@link Collector}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const collector = (): Collector => {
  const byFile = new Map<number, Set<string>>()
  return {
    byFile,
    add: (file, contentJson) => {
      let names = byFile.get(file)
      if (names === undefined) {
        names = new Set()
        byFile.set(file, names)
      }
      // A `for in` over the parsed object: its own keys in the stored text's order, `__proto__` included.
      const content = JSON.parse(contentJson) as Record<string, unknown>
      for (const name in content) names.add(name)
    }
  }
}

interface NameRow {
  readonly file_id: string
  readonly name: string
}

/**
 * Writes the names of `collected` that the files do not have yet, after the file's own, inside the transaction
 * that has just copied their submissions: `seq` is the highest of the table, one of those submissions.
 *
 * @since 0.2.0
 * @category writing
 */
export const record = (
  sql: SqlClient.SqlClient,
  int8: (value: number | string) => Statement.Fragment,
  files: ReadonlyArray<{ readonly id: string; readonly index: number }>,
  collected: Collector
): Effect.Effect<void, SqlError> =>
  Effect.gen(function* () {
    // A file may be named by more than one entry of an append: its names in document order.
    const wanted = new Map<string, Set<string>>()
    for (const file of [...files].sort((a, b) => a.index - b.index)) {
      const names = collected.byFile.get(file.index)
      if (names === undefined || names.size === 0) continue
      const all = wanted.get(file.id) ?? new Set<string>()
      for (const name of names) all.add(name)
      wanted.set(file.id, all)
    }
    if (wanted.size === 0) return
    const known = new Map<string, Set<string>>()
    for (const batch of Arr.chunksOf([...wanted.keys()], INSERT_BATCH)) {
      const rows = yield* sql<NameRow>`SELECT file_id, name FROM content_names WHERE ${sql.in("file_id", batch)}`
      for (const row of rows) {
        const names = known.get(row.file_id) ?? new Set<string>()
        names.add(row.name)
        known.set(row.file_id, names)
      }
    }
    const [top] = yield* sql<{ readonly seq: number | string }>`SELECT max(seq) AS seq FROM submissions`
    const seq = top?.seq ?? 0
    const rows: Array<readonly [string, number, string]> = []
    for (const [id, names] of wanted) {
      const have = known.get(id) ?? new Set<string>()
      let position = have.size
      for (const name of names) if (!have.has(name)) rows.push([id, position++, name])
    }
    yield* insert(
      sql,
      int8,
      rows.map(([id, position, name]) => [id, position, name, seq] as const)
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

/**
 * Fills `content_names` from every stored submission, in insertion order: for the migration that creates it.
 * Holds every file's names (not its submissions) in memory.
 *
 * @since 0.2.0
 * @category migrations
 */
export const backfill = (
  sql: SqlClient.SqlClient,
  int8: (value: number | string) => Statement.Fragment
): Effect.Effect<void, SqlError> =>
  Effect.gen(function* () {
    const seen = new Map<string, Set<string>>()
    let last: number | string = 0
    for (;;) {
      const rows: ReadonlyArray<{
        readonly seq: number | string
        readonly file_id: string
        readonly content: string
      }> = yield* sql<{ readonly seq: number | string; readonly file_id: string; readonly content: string }>`
        SELECT seq, file_id, content FROM submissions WHERE seq > ${int8(last)} ORDER BY seq LIMIT ${BACKFILL_BATCH}`
      const end = rows.at(-1)
      if (end === undefined) return
      const added: Array<readonly [string, number, string, number | string]> = []
      for (const row of rows) {
        let names = seen.get(row.file_id)
        if (names === undefined) {
          names = new Set()
          seen.set(row.file_id, names)
        }
        const content = JSON.parse(row.content) as Record<string, unknown>
        for (const name in content) {
          if (names.has(name)) continue
          added.push([row.file_id, names.size, name, row.seq])
          names.add(name)
        }
      }
      yield* insert(sql, int8, added)
      last = end.seq
    }
  })
