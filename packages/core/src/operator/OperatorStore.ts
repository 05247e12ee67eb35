/**
 * The port the operator CLI writes through: fixtures, users and API keys.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ApiKey, FileId, Timestamp, UserId } from "../shared/FileData.js"
import type { StorageUnavailable } from "../shared/FileDataError.js"
import * as Failure from "../shared/internal/failure.js"
import type { AppendSource } from "./Append.js"
import type * as Erasure from "./Erasure.js"
import type { FixtureInvalid, FixtureSource } from "./Fixture.js"

/**
 * An API key as an operator sees it; the key itself is never stored, only its hash.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApiKeyInfo {
  readonly id: string
  readonly userId: UserId
  /** The key's first characters as `ApiKeyPrefix.fromText` keeps them; none for a short key or one stored before prefixes were. */
  readonly prefix: Option.Option<string>
  readonly createdAt: Timestamp
  readonly revokedAt: Option.Option<Timestamp>
}

/**
 * A user as an operator sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface UserInfo {
  readonly id: UserId
  /** Keys not revoked. */
  readonly activeKeys: number
  readonly files: number
}

/**
 * How much an import wrote.
 *
 * @since 0.1.0
 * @category models
 */
export interface ImportSummary {
  readonly users: number
  readonly apiKeys: number
  readonly files: number
  readonly submissions: number
}

/**
 * How much an append added: file entries, and submissions in all.
 *
 * @since 0.1.0
 * @category models
 */
export interface AppendSummary {
  readonly files: number
  readonly submissions: number
}

/**
 * What removing a user took with it.
 *
 * @since 0.2.0
 * @category models
 */
export interface UserRemoval {
  readonly apiKeys: number
  readonly files: number
  readonly submissions: number
  readonly webhooks: number
}

/**
 * No user has this id.
 *
 * @since 0.1.0
 * @category errors
 */
export class UserNotFound extends Failure.withMessage<UserNotFound>()(
  "UserNotFound",
  { userId: Schema.String },
  (failure) => `No user has the id ${JSON.stringify(failure.userId)}`
) {}

/**
 * A user with this id already exists.
 *
 * @since 0.1.0
 * @category errors
 */
export class UserExists extends Failure.withMessage<UserExists>()(
  "UserExists",
  { userId: Schema.String },
  (failure) => `A user with the id ${JSON.stringify(failure.userId)} already exists`
) {}

/**
 * No API key has this id.
 *
 * @since 0.1.0
 * @category errors
 */
export class KeyNotFound extends Failure.withMessage<KeyNotFound>()(
  "KeyNotFound",
  { keyId: Schema.String },
  (failure) => `No API key has the id ${JSON.stringify(failure.keyId)}`
) {}

/**
 * Writes done by operators. Each call is one transaction: it applies whole or not at all.
 *
 * @since 0.1.0
 * @category models
 */
export interface OperatorStore {
  /**
   * Imports a decoded fixture, or one read as a stream (`FixtureReader` of `@filedata/fixture`), in one
   * transaction that lasts while the stream is read; only one batch of submissions is held at a time. Refuses,
   * naming the entry's path, any id or key that already exists and any file of an unknown user; a failure of
   * the stream is passed on. Either way nothing is written.
   */
  readonly importFixture: <E = never, R = never>(
    fixture: FixtureSource<E, R>
  ) => Effect.Effect<ImportSummary, FixtureInvalid | StorageUnavailable | E, R>
  /**
   * Appends submissions to files that exist, decoded or read as a stream (`AppendReader` of
   * `@filedata/fixture`), in one transaction that lasts while the stream is read: each file's
   * `SubmissionCounter` grows by the number appended to it, and its `VisitCounter` is replaced where one is
   * given. Refuses, naming the entry's path, an id no file has, a file named twice, and a counter that would
   * pass the largest safe integer, together with the source's own refusal (`FixtureInvalid`); any other
   * failure of the stream is passed on. Either way nothing is written. Readers see each file before the
   * append or after it, never in between.
   */
  readonly appendSubmissions: <E = never, R = never>(
    source: AppendSource<E, R>
  ) => Effect.Effect<AppendSummary, FixtureInvalid | StorageUnavailable | E, R>
  /**
   * Erases the file's submissions that `selection` names, in one transaction under the write lock, and nothing
   * when it refuses (`Erasure.UnknownFile`, `Erasure.SubmissionsNotInFile`). After it commits the erased content
   * is in no read, export, feed page or webhook attempt (pending and past events of the file are rewritten
   * without it, or dropped when nothing is left), `SubmissionCounter` is lower by the number erased, the feed
   * holds a `submission.erased` change for each in place of its `created` one, each webhook of the file has a
   * `submissions.erased` event, and the adapter has removed the text from its files where it can
   * (docs/security.md#erasure). Erasing none (no content matched) succeeds and writes nothing.
   *
   * @since 0.3.0
   */
  readonly eraseSubmissions: (
    fileId: FileId,
    selection: Erasure.Selection
  ) => Effect.Effect<Erasure.Summary, Erasure.UnknownFile | Erasure.SubmissionsNotInFile | StorageUnavailable>
  /** Keeps the key's hash and its prefix (`ApiKeyPrefix.fromText`), never the key. */
  readonly createKey: (userId: UserId, apiKey: ApiKey) => Effect.Effect<ApiKeyInfo, UserNotFound | StorageUnavailable>
  readonly revokeKey: (keyId: string) => Effect.Effect<ApiKeyInfo, KeyNotFound | StorageUnavailable>
  /** Keys by id, ascending; revoked ones too. */
  readonly listKeys: (userId: Option.Option<UserId>) => Effect.Effect<ReadonlyArray<ApiKeyInfo>, StorageUnavailable>
  /** The key whose text this is, revoked or not, found by its hash. */
  readonly findKey: (apiKey: ApiKey) => Effect.Effect<Option.Option<ApiKeyInfo>, StorageUnavailable>
  /** A user with no keys and no files; its id obeys the text rules (`TextRules`), as a fixture's does. */
  readonly createUser: (userId: UserId) => Effect.Effect<void, UserExists | StorageUnavailable>
  /** Every user by id, ascending, with the number of its active keys and of its files. */
  readonly listUsers: Effect.Effect<ReadonlyArray<UserInfo>, StorageUnavailable>
  readonly userExists: (userId: UserId) => Effect.Effect<boolean, StorageUnavailable>
  /**
   * Deletes a user with everything that is its own, in one transaction: its keys (revoked ones too), its files
   * with their submissions, and the files' webhooks with their events and delivery log. Its ids may then be
   * imported again (`demo --reset` does).
   */
  readonly removeUser: (userId: UserId) => Effect.Effect<UserRemoval, UserNotFound | StorageUnavailable>
}

/**
 * @since 0.1.0
 * @category tags
 */
export const OperatorStore: Context.Tag<OperatorStore, OperatorStore> =
  Context.GenericTag<OperatorStore>("@filedata/core/OperatorStore")
