import { join } from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { FileData } from "@filedata/core"
import { FixtureDocument } from "@filedata/fixture"
import { Fixtures, TempDirectory } from "@filedata/testing"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

/** A fresh directory under the system temp dir, removed when the scope closes. */
export const tempDir = TempDirectory.scoped("sqlite")

/** A database path whose parent directory does not exist yet, so the layer has to create it. */
export const tempDatabase = Effect.map(tempDir, (dir) => join(dir, "data", "filedata.db"))

/** A client of its own on the same file, to look at what the adapter wrote. */
export const inspect = <A, E>(filename: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(SqliteClient.layer({ filename })))

/** Row counts of every table the adapter owns. */
export const counts = (filename: string) =>
  inspect(filename, (sql) =>
    Effect.all({
      users: sql<{ n: number }>`SELECT count(*) AS n FROM users`,
      apiKeys: sql<{ n: number }>`SELECT count(*) AS n FROM api_keys`,
      files: sql<{ n: number }>`SELECT count(*) AS n FROM files`,
      submissions: sql<{ n: number }>`SELECT count(*) AS n FROM submissions`
    }).pipe(
      Effect.map((tables) => ({
        users: tables.users[0]?.n,
        apiKeys: tables.apiKeys[0]?.n,
        files: tables.files[0]?.n,
        submissions: tables.submissions[0]?.n
      }))
    )
  )

/** Decodes a fixture document the way the CLI does; a test document that does not decode is a bug. */
export const fixture = (document: unknown) => Effect.orDie(FixtureDocument.decode(document))

/** A file of the fixture format with the fields a test does not care about filled in. */
export const file = Fixtures.file

/** Branded values for test literals. */
export const fileId = (id: string): FileData.FileId => FileData.FileId.make(id)

export const userId = (id: string): FileData.UserId => FileData.UserId.make(id)

export const apiKey = (text: string): FileData.ApiKey => Redacted.make(FileData.ApiKeyText.make(text))
