/**
 * The SQLite adapter as one layer: opens the database, migrates it and provides both storage ports.
 *
 * @since 0.1.0
 */

import { randomUUID } from "node:crypto"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { type FileDataError, FileRepository, OperatorStore } from "@filedata/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { unavailable } from "./internal/storage.js"
import * as SqliteFileRepository from "./SqliteFileRepository.js"
import * as SqliteMigrations from "./SqliteMigrations.js"
import * as SqliteOperatorStore from "./SqliteOperatorStore.js"

/**
 * Where the database lives and how it is read.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteStorageOptions {
  /** A file path, created with its parent directory if missing, or `":memory:"`. */
  readonly filename: string
  /** Submissions read per page; defaults to {@link SqliteFileRepository.defaultPageSize}. */
  readonly pageSize?: number | undefined
}

const MEMORY = ":memory:"

// The reader has a connection of its own, so an in-memory database must be one that two connections of
// this process can share: a named shared-cache memory database, gone when the last connection closes.
const resolveFilename = (filename: string): string =>
  filename === MEMORY ? `file:filedata-${randomUUID()}?mode=memory&cache=shared` : filename

const client = (filename: string, inMemory: boolean) =>
  Layer.unwrapEffect(
    Effect.as(
      inMemory
        ? Effect.void
        : Effect.try(() => {
            mkdirSync(dirname(filename), { recursive: true })
          }),
      // The client itself switches a file database to WAL, so readers never wait for the importer;
      // an in-memory database has no journal file to switch.
      SqliteClient.layer({ filename, disableWAL: inMemory })
    )
  )

const configure = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Both settings belong to the connection, not the file, so they are set on every open.
  yield* sql`PRAGMA busy_timeout = 5000`
  yield* sql`PRAGMA foreign_keys = ON`
  yield* SqliteMigrations.run
})

/**
 * The `FileRepository` and `OperatorStore` of one SQLite database, migrated when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: SqliteStorageOptions
): Layer.Layer<FileRepository.FileRepository | OperatorStore.OperatorStore, FileDataError.StorageUnavailable> => {
  const filename = resolveFilename(options.filename)
  return Layer.scopedContext(
    Effect.gen(function* () {
      yield* configure
      const files = yield* SqliteFileRepository.make({
        filename,
        pageSize: options.pageSize ?? SqliteFileRepository.defaultPageSize
      })
      const operator = yield* SqliteOperatorStore.make
      return Context.make(FileRepository.FileRepository, files).pipe(Context.add(OperatorStore.OperatorStore, operator))
    })
  ).pipe(
    Layer.provide(client(filename, options.filename === MEMORY)),
    // better-sqlite3 throws while opening an unusable file, which reaches us as a defect, not a SqlError.
    Layer.catchAllCause((cause) => Layer.fail(unavailable(Cause.squash(cause))))
  )
}
