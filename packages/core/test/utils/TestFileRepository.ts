/**
 * An in-memory `FileRepository` built from a fixture-like description. Submissions are served in ascending
 * `createdDate`, ties in insertion order, in small pages, like the real adapters.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { FileId, StoredFile, StoredSubmission, Timestamp, UserId } from "../../src/FileData.js"
import * as FileRepository from "../../src/FileRepository.js"
import * as SubmissionEntry from "../../src/SubmissionEntry.js"
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
  /** Submissions per page of the stream; 2 by default so multi-page replies are the norm. */
  readonly pageSize?: number
}

export interface TestFileRepository {
  readonly repository: FileRepository.FileRepository
  readonly layer: Layer.Layer<FileRepository.FileRepository>
  /** The stored file, frozen: a use case that writes to it throws. */
  readonly file: (id: string) => StoredFile | undefined
  /** The stored submissions of a file in reply order. */
  readonly submissions: (id: string) => ReadonlyArray<StoredSubmission>
}

const byCreatedDate = (a: SubmissionSpec, b: SubmissionSpec): number =>
  Date.parse(a.createdDate) - Date.parse(b.createdDate)

/**
 * Every call is written to `journal` as `"<operation> <argument>"`, e.g. `"findFile file-1"`.
 */
export const make = (spec: RepositorySpec, journal: Journal = []): TestFileRepository => {
  const owners = new Map<string, UserId>()
  for (const user of spec.users) {
    for (const key of user.apiKeys) owners.set(key, user.id as UserId)
  }
  const files = new Map<string, StoredFile>()
  const rows = new Map<string, ReadonlyArray<StoredSubmission>>()
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
    // Array.prototype.sort is stable: equal dates keep their insertion order.
    const sorted = [...submissions].sort(byCreatedDate)
    rows.set(
      file.id,
      sorted.map((row) =>
        Object.freeze({ createdDate: row.createdDate as Timestamp, contentJson: JSON.stringify(row.content) })
      )
    )
  }

  const repository: FileRepository.FileRepository = {
    findKeyOwner: (apiKey) =>
      Effect.sync(() => {
        journal.push(`findKeyOwner ${Redacted.value(apiKey)}`)
        return Option.fromNullable(owners.get(Redacted.value(apiKey)))
      }),
    findFile: (fileId) =>
      Effect.sync(() => {
        journal.push(`findFile ${fileId}`)
        return Option.fromNullable(files.get(fileId))
      }),
    // Positions are row offsets, as text like every adapter's.
    submissionPage: (fileId, after) =>
      Effect.sync(() => {
        if (after === undefined) journal.push(`submissions ${fileId}`)
        const all = rows.get(fileId) ?? []
        const from = after === undefined ? 0 : Number(after)
        const to = from + (spec.pageSize ?? 2)
        return {
          entries: all.slice(from, to).map(SubmissionEntry.fromStored),
          next: to < all.length ? String(to) : undefined
        }
      }),
    ping: Effect.sync(() => {
      journal.push("ping")
    })
  }

  return {
    repository,
    layer: Layer.succeed(FileRepository.FileRepository, repository),
    file: (id) => files.get(id),
    submissions: (id) => rows.get(id) ?? []
  }
}
