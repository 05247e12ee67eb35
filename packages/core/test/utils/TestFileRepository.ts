/**
 * An in-memory `FileRepository` built from a fixture-like description. Submissions are served in ascending
 * `createdDate`, ties in insertion order, in small pages, like the real adapters; every submission gets a
 * sequence number as it is added, and a file's read point is the highest one so far.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { FileId, StoredFile, StoredSubmission, Timestamp, UserId } from "../../src/shared/FileData.js"
import * as FileRepository from "../../src/shared/FileRepository.js"
import * as SubmissionEntry from "../../src/shared/SubmissionEntry.js"
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
  /** Adds submissions to a file and counts them, as a writer's commit would. */
  readonly append: (id: string, submissions: ReadonlyArray<SubmissionSpec>) => void
  /** The files with submissions past a read point, as the SQL adapters' poll reads them. */
  readonly changesAfter: (position: number) => Effect.Effect<SubmissionSignals.Changes>
  /** `SubmissionSignals.polled` on {@link TestFileRepository.changesAfter}, polling every 250 ms of the clock. */
  readonly signals: Layer.Layer<SubmissionSignals.SubmissionSignals>
}

interface Row {
  readonly seq: number
  readonly file: string
  readonly createdMillis: number
  readonly submission: StoredSubmission
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
  const rows: Array<Row> = []
  const add = (id: string, submissions: ReadonlyArray<SubmissionSpec>) => {
    for (const row of submissions) {
      rows.push({
        seq: rows.length + 1,
        file: id,
        createdMillis: Date.parse(row.createdDate),
        submission: Object.freeze({
          createdDate: row.createdDate as Timestamp,
          contentJson: JSON.stringify(row.content)
        })
      })
    }
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
              : Option.some(Object.freeze({ ...file, readPoint: String(rows.length) as FileRepository.ReadPoint }))
        }
      }),
    readSubmissions: (fileId, range) =>
      Effect.sync(() => {
        if (range.after === undefined) journal.push(`submissions ${fileId}`)
        const window = range.since === undefined ? START : { createdMillis: range.since, seq: 0 }
        const given = range.after === undefined ? undefined : parsePosition(range.after)
        if (range.after !== undefined && given === undefined) {
          return { entries: [], next: range.after, hasMore: false }
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
            next: undefined,
            hasMore: false
          }
        }
        return {
          entries: page.map((row) => SubmissionEntry.fromStored(row.submission)),
          next:
            last !== undefined
              ? `${last.createdMillis}:${last.seq}`
              : (range.after ?? `${window.createdMillis}:${window.seq}`),
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
          : Option.some(Object.freeze({ ...file, readPoint: String(rows.length) as FileRepository.ReadPoint }))
      }),
    ping: Effect.sync(() => {
      journal.push("ping")
    })
  }

  const changesAfter = (position: number) =>
    Effect.sync(() => {
      const fresh = rows.filter((row) => row.seq > position)
      return {
        files: [...new Set(fresh.map((row) => row.file as FileId))],
        top: fresh.length === 0 ? undefined : rows.length
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
      add(id, submissions)
      files.set(id, Object.freeze({ ...file, SubmissionCounter: file.SubmissionCounter + submissions.length }))
    }
  }
}
