// The baseline's side of `bench/route.mjs`: its request listener (`baseline-handler.mjs`) on the database, driven
// by `route-harness.mjs`.

import Database from "better-sqlite3"
import { handler } from "./baseline-handler.mjs"
import { measure } from "./route-harness.mjs"

const [db, requests, runs] = process.argv.slice(2)
await measure(handler(new Database(db, { readonly: true, fileMustExist: true })), Number(requests), Number(runs))
