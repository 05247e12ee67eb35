import { StorageConformance } from "@filedata/conformance"
import { SqliteStorage } from "@filedata/sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { tempDatabase } from "./utils.js"

// A fresh file per call, removed with the layer's scope.
StorageConformance.suite("SQLite storage conformance", ({ pageSize }) =>
  Layer.unwrapScoped(Effect.map(tempDatabase, (filename) => SqliteStorage.layer({ filename, pageSize })))
)

StorageConformance.signalsSuite("SQLite submission signals conformance", ({ pageSize }) =>
  Layer.unwrapScoped(Effect.map(tempDatabase, (filename) => SqliteStorage.layer({ filename, pageSize })))
)
