/**
 * An in-memory `FileRepository` built from a fixture-like description. Submissions are served in ascending
 * `createdDate`, ties in insertion order, in small pages, like the real adapters; every submission gets a
 * sequence number and an id (`sub_t<seq>`) as it is added, every erasure a sequence number of the same counter,
 * and a file's read point is the highest one so far. The change feed is both in sequence order.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { FileId, StoredFile, StoredSubmission, Timestamp, UserId } from "../../src/shared/FileData.js"
import * as FileRepository from "../../src/shared/FileRepository.js"
import * as SubmissionEntry from "../../src/shared/SubmissionEntry.js"
import * as SubmissionId from "../../src/shared/SubmissionId.js"
import * as SubmissionSignals from "../../src/sync/SubmissionSignals.js"
import type { Journal } from "./Journal.js"

export interface UserSpec {
  readonly id: string
  readonly apiKeys: ReadonlyArray<string>
}

export interface SubmissionSpec {
  /** A reply timestamp, `YYYY-MM-DDTHH:mm:ss.sssZ`. */
  readonly createdDate: string
  readonly content: Readonly<Record<string, string>>
}

export interface FileSpec {
  readonly id: string
  readonly ownerId: string
  readonly name?: string
  readonly creationDate?: string
  readonly publicAvailability?: boolean
  readonly SubmissionCounter?: number
  readonly VisitCounter?: number
  readonly submissions?: ReadonlyArray<SubmissionSpec>
}

export interface RepositorySpec {
  readonly users: ReadonlyArray<UserSpec>
  readonly files: ReadonlyArray<FileSpec>
  /** Submissions per page when a read gives no limit; 2 by default so multi-page replies are the norm. */
  readonly pageSize?: number
}

export interface TestFileRepository {
  readonly repository: FileRepository.FileRepository
  readonly layer: Layer.Layer<FileRepository.FileRepository>
  /** The stored file, frozen: a use case that writes to it throws. */
  readonly file: (id: string) => StoredFile | undefined
  /** The stored submissions of a file in reply order. */
  readonly submissions: (id: string) => ReadonlyArray<StoredSubmission>
  /** Adds submissions to a file and counts them, as a writer's commit would; gives their ids. */
  readonly append: (id: string, submissions: ReadonlyArray<SubmissionSpec>) => ReadonlyArray<SubmissionId.SubmissionId>
  /** The ids of a file's submissions in reply order. */
  readonly ids: (id: string) => ReadonlyArray<SubmissionId.SubmissionId>
  /** Erases submissions of a file by id and uncounts them, as an erasure's commit would. */
  readonly erase: (id: string, ids: ReadonlyArray<SubmissionId.SubmissionId>) => void
  /** The files with submissions past a read point, as the SQL adapters' poll reads them. */
  readonly changesAfter: (position: number) => Effect.Effect<SubmissionSignals.Changes>
  /** `SubmissionSignals.polled` on {@link TestFileRepository.changesAfter}, polling every 250 ms of the clock. */
  readonly signals: Layer.Layer<SubmissionSignals.SubmissionSignals>
}

interface Row {
  readonly seq: number
  readonly id: SubmissionId.SubmissionId
  readonly file: string
  readonly createdMillis: number
  readonly submission: StoredSubmission
}

interface Erasure {
  readonly seq: number
  readonly id: SubmissionId.SubmissionId
  readonly file: string
}

// Positions are `createdMillis:seq`, as text like every adapter's.
const POSITION = /^(-?\d{1,15}):(\d{1,15})$/
const START = { createdMillis: Date.parse("0000-01-01T00:00:00.000Z"), seq: 0 }

const parsePosition = (text: string) => {
  const match = POSITION.exec(text)
  return match === null ? undefined : { createdMillis: Number(match[1]), seq: Number(match[2]) }
}

const compare = (a: typeof START, b: typeof START): number =>
  a.createdMillis === b.createdMillis ? a.seq - b.seq : a.createdMillis - b.createdMillis

/**
 * Every call is written to `journal` as `"<operation> <arguments>"`, e.g. `"findAccess key-1 file-1"`; a read of
 * submissions only when it starts a reply (no `after`), as `"submissions file-1"`.
 */
export const make = (spec: RepositorySpec, journal: Journal = []): TestFileRepository => {
  const owners = new Map<string, UserId>()
  for (const user of spec.users) {
    for (const key of user.apiKeys) owners.set(key, user.id as UserId)
  }
  const files = new Map<string, StoredFile>()
  let rows: Array<Row> = []
  const erasures: Array<Erasure> = []
  // The counter submissions and erasures share: the read point.
  let top = 0
  const add = (id: string, submissions: ReadonlyArray<SubmissionSpec>) => {
    const added: Array<SubmissionId.SubmissionId> = []
    for (const row of submissions) {
      top += 1
      const submissionId = SubmissionId.unsafeStored(`sub_t${top}`)
      added.push(submissionId)
      rows.push({
        seq: top,
        id: submissionId,
        file: id,
        createdMillis: Date.parse(row.createdDate),
        submission: Object.freeze({
          createdDate: row.createdDate as Timestamp,
          contentJson: JSON.stringify(row.content)
        })
      })
    }
    return added
  }
  for (const file of spec.files) {
    const submissions = file.submissions ?? []
    files.set(
      file.id,
      Object.freeze({
        id: file.id as FileId,
        ownerId: file.ownerId as UserId,
        name: file.name ?? `File ${file.id}`,
        creationDate: (file.creationDate ?? "2024-01-01T00:00:00.000Z") as Timestamp,
        publicAvailability: file.publicAvailability ?? false,
        SubmissionCounter: file.SubmissionCounter ?? submissions.length,
        VisitCounter: file.VisitCounter ?? 0
      })
    )
    add(file.id, submissions)
  }

  // Ascending createdDate, ties by seq, which is insertion order.
  const ordered = (id: string) => rows.filter((row) => row.file === id).sort((a, b) => compare(a, b))

  const repository: FileRepository.FileRepository = {
    findAccess: (apiKey, fileId) =>
      Effect.sync(() => {
        journal.push(`findAccess ${Redacted.value(apiKey)} ${fileId}`)
        const owner = owners.get(Redacted.value(apiKey))
        if (owner === undefined) return FileRepository.noAccess
        const file = files.get(fileId)
        return {
          owner: Option.some(owner),
          file:
            file === undefined
              ? Option.none()
              : Option.some(Object.freeze({ ...file, readPoint: String(top) as FileRepository.ReadPoint }))
        }
      }),
    readSubmissions: (fileId, range) =>
      Effect.sync(() => {
        if (range.after === undefined) journal.push(`submissions ${fileId}`)
        const window = range.since === undefined ? START : { createdMillis: range.since, seq: 0 }
        const given = range.after === undefined ? undefined : parsePosition(range.after)
        if (range.after !== undefined && given === undefined) {
          return { entries: [], ids: [], next: range.after, hasMore: false }
        }
        const lower = given !== undefined && compare(given, window) > 0 ? given : window
        const upTo = range.upTo === undefined ? Number.MAX_SAFE_INTEGER : Number(range.upTo)
        const matching = ordered(fileId).filter(
          (row) =>
            compare(row, lower) > 0 && (range.until === undefined || row.createdMillis < range.until) && row.seq <= upTo
        )
        const page = matching.slice(0, range.limit ?? spec.pageSize ?? 2)
        const last = page[page.length - 1]
        // As a thrifty adapter does: no position at the end of a range that asked for none.
        if (range.endPosition === false && matching.length === page.length) {
          return {
            entries: page.map((row) => SubmissionEntry.fromStored(row.submission)),
            ids: page.map((row) => row.id),
            next: undefined,
            hasMore: false
          }
        }
        return {
          entries: page.map((row) => SubmissionEntry.fromStored(row.submission)),
          ids: page.map((row) => row.id),
          next:
            last !== undefined
              ? `${last.createdMillis}:${last.seq}`
              : (range.after ?? `${window.createdMillis}:${window.seq}`),
          hasMore: matching.length > page.length
        }
      }),
    // Stored and erased submissions merged by sequence number; a position that is not one names nothing.
    readChanges: (fileId, range) =>
      Effect.sync(() => {
        if (range.after === undefined) journal.push(`changes ${fileId}`)
        if (range.after !== undefined && !/^\d{1,15}$/.test(range.after)) {
          return { changes: [], next: range.after, hasMore: false }
        }
        const after = range.after === undefined ? 0 : Number(range.after)
        const upTo = range.upTo === undefined ? Number.MAX_SAFE_INTEGER : Number(range.upTo)
        const matching: Array<{ readonly seq: number; readonly change: FileRepository.Change }> = [
          ...rows
            .filter((row) => row.file === fileId)
            .map((row) => ({
              seq: row.seq,
              change: {
                type: "submission.created" as const,
                id: row.id,
                entry: SubmissionEntry.fromStored(row.submission)
              }
            })),
          ...erasures
            .filter((erasure) => erasure.file === fileId)
            .map((erasure) => ({ seq: erasure.seq, change: { type: "submission.erased" as const, id: erasure.id } }))
        ]
          .filter(({ seq }) => seq > after && seq <= upTo)
          .sort((a, b) => a.seq - b.seq)
        const page = matching.slice(0, range.limit ?? spec.pageSize ?? 2)
        return {
          changes: page.map(({ change }) => change),
          next: String(page.at(-1)?.seq ?? after),
          hasMore: matching.length > page.length
        }
      }),
    // Names in the order of first appearance by insertion, from the rows at or below the read point.
    readContentNames: (fileId, upTo) =>
      Effect.sync(() => {
        const names = new Set<string>()
        for (const row of rows) {
          if (row.file !== fileId || row.seq > Number(upTo)) continue
          for (const name of Object.keys(JSON.parse(row.submission.contentJson))) names.add(name)
        }
        return [...names]
      }),
    findFile: (fileId) =>
      Effect.sync(() => {
        journal.push(`findFile ${fileId}`)
        const file = files.get(fileId)
        return file === undefined
          ? Option.none()
          : Option.some(Object.freeze({ ...file, readPoint: String(top) as FileRepository.ReadPoint }))
      }),
    ping: Effect.sync(() => {
      journal.push("ping")
    })
  }

  const changesAfter = (position: number) =>
    Effect.sync(() => {
      const fresh = [...rows, ...erasures].filter((row) => row.seq > position)
      return {
        files: [...new Set(fresh.map((row) => row.file as FileId))],
        top: fresh.length === 0 ? undefined : top
      }
    })

  return {
    repository,
    layer: Layer.succeed(FileRepository.FileRepository, repository),
    changesAfter,
    signals: Layer.scoped(
      SubmissionSignals.SubmissionSignals,
      SubmissionSignals.polled({ changesAfter, position: Number, intervalMillis: 250 })
    ),
    file: (id) => files.get(id),
    submissions: (id) => ordered(id).map((row) => row.submission),
    append: (id, submissions) => {
      const file = files.get(id)
      if (file === undefined) throw new Error(`no file ${id}`)
      const added = add(id, submissions)
      files.set(id, Object.freeze({ ...file, SubmissionCounter: file.SubmissionCounter + submissions.length }))
      return added
    },
    ids: (id) => ordered(id).map((row) => row.id),
    erase: (id, ids) => {
      const file = files.get(id)
      if (file === undefined) throw new Error(`no file ${id}`)
      const erased = rows.filter((row) => row.file === id && ids.includes(row.id))
      rows = rows.filter((row) => !erased.includes(row))
      for (const row of erased) {
        top += 1
        erasures.push({ seq: top, id: row.id, file: id })
      }
      files.set(id, Object.freeze({ ...file, SubmissionCounter: file.SubmissionCounter - erased.length }))
    }
  }
}
