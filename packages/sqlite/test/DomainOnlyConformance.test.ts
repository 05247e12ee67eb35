import { StorageConformance } from "@filedata/conformance"
import { SqliteStorage } from "@filedata/sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { tempDatabase } from "./utils.js"

// The adapter without its pages joined in SQLite: an adapter written from the domain members alone passes the
// same suite, the core joining and rendering `readSubmissions`' pages.
StorageConformance.suite(
  "SQLite storage conformance, domain members only",
  StorageConformance.withoutCapabilities(({ pageSize }) =>
    Layer.unwrapScoped(Effect.map(tempDatabase, (filename) => SqliteStorage.layer({ filename, pageSize })))
  )
)
