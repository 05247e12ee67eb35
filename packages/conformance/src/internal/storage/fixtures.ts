/**
 * What the storage conformance sections share: how they import, append and read, and the data they read with.
 *
 * @internal
 */
import {
  EncodedPages,
  FileData,
  FileDataEncoder,
  type FileDataError,
  FileRepository,
  Fixture,
  GetFileData,
  OperatorStore,
  type RateLimiter,
  SubmissionEntry,
  type SubmissionId
} from "@filedata/core"
import { AppendReader, FixtureDocument, FixtureReader } from "@filedata/fixture"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"

// A submission as the tests write it: an instant in any ISO 8601 form with a zone, and its content.
export interface NewSubmission {
  readonly createdDate: string
  readonly content: Readonly<Record<string, string>>
}

export const fileId = (id: string): FileData.FileId => FileData.FileId.make(id)
export const userId = (id: string): FileData.UserId => FileData.UserId.make(id)
export const apiKey = (text: string): FileData.ApiKey => Redacted.make(FileData.ApiKeyText.make(text))

/** The text of a document cut into pieces of `size` characters, as a file arrives. */
export const chunked = (text: string, size: number): Stream.Stream<string> =>
  Stream.fromIterable(
    Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))
  )

// Imported the way the CLI imports a file: read as a stream, submissions in small batches, so every test also
// runs an import across many batches. Text that is not JSON would be a bug of the suite.
export const importDocument = (document: unknown) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const entries = FixtureReader.fromText(chunked(JSON.stringify(document), 4096), { batchSize: 100 }).pipe(
      Stream.catchTag("FixtureMalformed", Stream.die)
    )
    return yield* store.importFixture(entries)
  })

// A decoded fixture, as the demo and embedders hand one over.
export const importDecoded = (document: unknown) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    return yield* store.importFixture(yield* Effect.orDie(FixtureDocument.decode(document)))
  })

// Appended the way the CLI appends a file, as `importDocument` imports one.
export const appendDocument = (document: unknown) =>
  Effect.flatMap(OperatorStore.OperatorStore, (store) =>
    store.appendSubmissions(
      Stream.catchTag(
        AppendReader.fromText(chunked(JSON.stringify(document), 4096), { batchSize: 100 }),
        "FixtureMalformed",
        Stream.die
      )
    )
  )

export const file = (fields: {
  readonly id: string
  readonly userId: string
  readonly submissions?: ReadonlyArray<{ readonly createdDate: string; readonly content: unknown }>
}) => ({ name: `File ${fields.id}`, creationDate: "2024-01-01T00:00:00.000Z", ...fields })

/** Imports user `u1`, with the key `k1`, and files of its own with the given submissions, keyed by file id. */
export const importFiles = (files: Readonly<Record<string, ReadonlyArray<NewSubmission>>>) =>
  importDocument({
    users: [{ id: "u1", apiKeys: ["k1"] }],
    files: Object.entries(files).map(([id, submissions]) => file({ id, userId: "u1", submissions }))
  })

export const submissionsEverySecond = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    content: { index: String(i) }
  }))

export const readSubmissions = (id: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) =>
    Stream.runCollect(FileRepository.submissions(files, fileId(id)))
  ).pipe(Effect.map(Chunk.toReadonlyArray))

// The file as a request with the active key `key` finds it: any user's key finds any user's file.
export const findFile = (key: string, id: string) =>
  Effect.flatMap(FileRepository.FileRepository, (files) =>
    Effect.map(files.findAccess(apiKey(key), fileId(id)), (access) => access.file)
  )

/**
 * What the ports show of the given ids: how many of the users exist and how many files they own, every key,
 * every submission of the files.
 */
export const census = (ids: { readonly users: ReadonlyArray<string>; readonly files: ReadonlyArray<string> }) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const users = yield* Effect.filter(ids.users, (id) => store.userExists(userId(id)))
    const owned = (yield* store.listUsers).filter((user) => ids.users.includes(user.id))
    const submissions = yield* Effect.forEach(ids.files, (id) => Effect.map(readSubmissions(id), (rows) => rows.length))
    return {
      users: users.length,
      apiKeys: (yield* store.listKeys(Option.none())).length,
      files: owned.reduce((sum, user) => sum + user.files, 0),
      submissions: submissions.reduce((sum, n) => sum + n, 0)
    }
  })

export const issuesOf = (error: unknown) =>
  error instanceof Fixture.FixtureInvalid
    ? error.issues.map((issue) => ({ path: issue.path, detail: issue.detail }))
    : error

/** The issues an import of `document` is refused with; an import that succeeds fails the test. */
export const importIssues = (document: unknown) => Effect.map(Effect.flip(importDocument(document)), issuesOf)

/** The issues an append of `document` is refused with; an append that succeeds fails the test. */
export const appendIssues = (document: unknown) => Effect.map(Effect.flip(appendDocument(document)), issuesOf)

export const existing = {
  users: [{ id: "u-old", apiKeys: ["old-key"] }],
  files: [file({ id: "f-old", userId: "u-old", submissions: submissionsEverySecond(2) })]
}

export const MIN_INSTANT = "0000-01-01T00:00:00.000Z"
export const MAX_INSTANT = "9999-12-31T23:59:59.999Z"

// Few distinct instants, so tie groups are long and page boundaries fall inside them.
export const INSTANTS = [
  MIN_INSTANT,
  "1969-12-31T23:59:59.999Z",
  "2024-01-01T00:00:00.000Z",
  "2024-01-01T00:00:00.001Z",
  MAX_INSTANT
]
// Window bounds on those instants and between them.
export const BOUNDS = [
  ...INSTANTS.map((instant) => Date.parse(instant)),
  Date.parse("1900-01-01T00:00:00.000Z"),
  Date.parse("2024-01-01T00:00:00.002Z")
]

export const at = (millis: number): FileData.Timestamp => FileData.timestampFromEpochMillis(millis)
export const JAN_1 = Date.UTC(2024, 0, 1)

/** The pages of a read of `range`, each continuing after the last, until one says no more match. */
export const pagesOf = (id: string, range: FileRepository.SubmissionRange) =>
  Effect.gen(function* () {
    const files = yield* FileRepository.FileRepository
    const pages: Array<FileRepository.SubmissionPage> = []
    let after = range.after
    for (;;) {
      const page = yield* files.readSubmissions(fileId(id), { ...range, after })
      pages.push(page)
      if (!page.hasMore) return pages
      if (pages.length > 1000) throw new Error("a read that never ends")
      after = page.next
    }
  })

/** The joined pages of a read of `range`, each continuing after the last, until one says no more match. */
export const joinedPagesOf = (id: string, range: FileRepository.SubmissionRange) =>
  Effect.gen(function* () {
    const { readJoined } = EncodedPages.of(yield* FileRepository.FileRepository)
    const pages: Array<EncodedPages.JoinedPage> = []
    let after = range.after
    for (;;) {
      const page = yield* readJoined(fileId(id), { ...range, after }, "stored")
      pages.push(page)
      if (!page.hasMore) return pages
      if (pages.length > 1000) throw new Error("a read that never ends")
      after = page.next
    }
  })

export const parsed = (pages: ReadonlyArray<FileRepository.SubmissionPage>): ReadonlyArray<FileData.StoredSubmission> =>
  pages.flatMap((page) => page.entries.map(SubmissionEntry.parse))

/** The page's `i`th entry with its id first, as the incremental read, an NDJSON line and the feed show it. */
export const withId = (page: FileRepository.SubmissionPage, i: number): string =>
  SubmissionEntry.withId(page.ids[i] as SubmissionId.SubmissionId, page.entries[i] as SubmissionEntry.SubmissionEntry)

/** Submissions as the port hands them back, in reply order (a stable sort keeps ties in insertion order). */
export const stored = (submissions: ReadonlyArray<NewSubmission>): ReadonlyArray<FileData.StoredSubmission> =>
  [...submissions]
    .sort((a, b) => Date.parse(a.createdDate) - Date.parse(b.createdDate))
    .map((row) => ({ createdDate: at(Date.parse(row.createdDate)), contentJson: JSON.stringify(row.content) }))

/** Full pages of `size`, then what is left; no empty page after a full one, one empty page for nothing. */
export const pageSizes = (count: number, size: number): ReadonlyArray<number> =>
  count === 0 ? [0] : Array.from({ length: Math.ceil(count / size) }, (_, i) => Math.min(size, count - i * size))

export const everyAdmitted: RateLimiter.RateLimiter = {
  policy: {
    apiKey: { limit: Number.MAX_SAFE_INTEGER, windowMillis: 60_000 },
    clientAddress: { limit: Number.MAX_SAFE_INTEGER, windowMillis: 60_000 }
  },
  consume: (subject) =>
    Effect.succeed({
      scope: subject.scope,
      limit: Number.MAX_SAFE_INTEGER,
      windowMillis: 60_000,
      remaining: Number.MAX_SAFE_INTEGER,
      resetMillis: 60_000
    })
}

/** Appends submissions to a file through the operator port, as `pnpm filedata append` does. */
export const appendTo = (id: string, submissions: ReadonlyArray<NewSubmission>) =>
  Effect.asVoid(Effect.orDie(appendDocument({ files: [{ id, submissions }] })))

export const decoder = new TextDecoder()

/** A joined page with its bytes as text, to compare whatever kind of `Uint8Array` an adapter hands out. */
export const asText = <P extends EncodedPages.JoinedPage | EncodedPages.JoinedChanges>(page: P) => ({
  ...page,
  joined: EncodedPages.joinedText(page)
})

/** The whole reply of `GetFileData` for the file, written through `write` as a transport would. */
export const fileDataReply = <R>(
  id: string,
  apiKey: string,
  write: (piece: string | Uint8Array) => Effect.Effect<void, never, R>
) =>
  Effect.gen(function* () {
    const files = yield* FileRepository.FileRepository
    const reply = yield* GetFileData.runWith(
      { files, limiter: everyAdmitted },
      { clientAddress: "192.0.2.1", body: Effect.succeed({ fileId: id, apiKey }) }
    )
    const pieces: Array<string> = []
    yield* FileDataEncoder.writeTo(reply, (piece) =>
      Effect.zipRight(
        Effect.sync(() => pieces.push(typeof piece === "string" ? piece : decoder.decode(piece))),
        write(piece)
      )
    )
    return JSON.parse(pieces.join("")) as FileData.FileData
  })

/**
 * Provides the adapter under test to a test, with pages of `pageSize` (1000 unless a test looks at page
 * boundaries).
 */
export type WithStorage = (
  pageSize?: number
) => <A, E, R>(
  self: Effect.Effect<A, E, R>
) => Effect.Effect<
  A,
  E | FileDataError.StorageUnavailable,
  Exclude<R, FileRepository.FileRepository | OperatorStore.OperatorStore>
>
