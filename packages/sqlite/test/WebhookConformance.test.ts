import { WebhookConformance } from "@filedata/conformance"
import { SqliteStorage } from "@filedata/sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { tempDatabase } from "./utils.js"

// A fresh file per call, removed with the layer's scope.
WebhookConformance.suite("SQLite webhook conformance", () =>
  Layer.unwrapScoped(Effect.map(tempDatabase, (filename) => SqliteStorage.layer({ filename })))
)
