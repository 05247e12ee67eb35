/**
 * What the storage layer of an SQL adapter provides, whatever its engine.
 *
 * @since 0.2.0
 */
import type { FileDataError, FileRepository, OperatorStore, SubmissionSignals, WebhookStore } from "@filedata/core"
import type * as Layer from "effect/Layer"

/**
 * The ports a storage layer provides, all over one database.
 *
 * @since 0.2.0
 * @category models
 */
export type Services =
  | FileRepository.FileRepository
  | OperatorStore.OperatorStore
  | SubmissionSignals.SubmissionSignals
  | WebhookStore.WebhookStore

/**
 * A storage layer: its {@link Services}, or `StorageUnavailable` when the database cannot be opened or migrated.
 *
 * @since 0.2.0
 * @category models
 */
export type SqlStorage = Layer.Layer<Services, FileDataError.StorageUnavailable>
