// The baseline of `pnpm bench`, served: its request listener (`bench/lib/baseline-handler.mjs`, which says what it
// does and does not do) on node:http over the database file. Not shipped; only measured against
// (docs/performance.md#the-baseline).
// Usage: node bench/baseline.mjs DB_PATH [PORT]

import { createServer } from "node:http"
import Database from "better-sqlite3"
import { handler } from "./lib/baseline-handler.mjs"

const [dbPath, port = "0"] = process.argv.slice(2)
const db = new Database(dbPath, { readonly: true, fileMustExist: true })

const server = createServer(handler(db))
server.listen(Number(port), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})
// Exits at once, so `--cpu-prof` writes its profile; the bench's clients are done by then.
process.on("SIGTERM", () => process.exit(0))
process.on("SIGINT", () => process.exit(0))
