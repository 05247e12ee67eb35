// The raw baseline of `pnpm bench`: the same endpoint on plain node:http and better-sqlite3 prepared
// statements, over the same database schema, with no framework. Not shipped; only measured against.
// Usage: node bench/baseline.mjs DB_PATH PORT

import { createHash } from "node:crypto"
import { once } from "node:events"
import { createServer } from "node:http"
import Database from "better-sqlite3"

const [dbPath, port = "0"] = process.argv.slice(2)
const db = new Database(dbPath, { readonly: true })
const keyOwner = db.prepare("SELECT user_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL")
const fileById = db.prepare(
  "SELECT user_id, name, creation_date, public_availability, submission_counter, visit_counter FROM files WHERE id = ?"
)
// Keyset pages: an open iterator would lock the connection against every other request meanwhile.
const PAGE = 1000
const page = db
  .prepare(
    `SELECT created_date, seq, entry FROM submissions WHERE file_id = ? AND created_date >= ?
       AND (created_date > ? OR (created_date = ? AND seq > ?)) ORDER BY created_date, seq LIMIT ${PAGE}`
  )
  .raw(true)

const problem = (res, status, code) => {
  res.writeHead(status, { "content-type": "application/problem+json" })
  res.end(JSON.stringify({ type: `urn:filedata:problem:${code}`, title: code, status, detail: code, code }))
}

const handle = async (req, res) => {
  if (req.method !== "POST" || req.url !== "/api/v1/file-data") return problem(res, 404, "not_found")
  const chunks = []
  for await (const chunk of req) chunks.push(chunk)
  let body
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
  } catch {
    return problem(res, 422, "validation_failed")
  }
  if (typeof body?.fileId !== "string" || typeof body?.apiKey !== "string")
    return problem(res, 422, "validation_failed")
  const owner = keyOwner.get(createHash("sha256").update(body.apiKey).digest("hex"))
  if (owner === undefined) return problem(res, 403, "access_denied")
  const file = fileById.get(body.fileId)
  if (file === undefined) return problem(res, 404, "file_not_found")
  if (file.user_id !== owner.user_id) return problem(res, 403, "access_denied")
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" })
  let out =
    `{"name":${JSON.stringify(file.name)},"creationDate":"${new Date(file.creation_date).toISOString()}",` +
    `"publicAvailability":${file.public_availability === 1},"SubmissionCounter":${file.submission_counter},` +
    `"VisitCounter":${file.visit_counter},"submissions":[`
  let first = true
  let after = [Number.MIN_SAFE_INTEGER, 0]
  for (;;) {
    const rows = page.all(body.fileId, after[0], after[0], after[0], after[1])
    // The schema keeps each submission as the reply writes it (docs/architecture.md), so it is read as is.
    for (const [, , entry] of rows) {
      out += first ? entry : `,${entry}`
      first = false
    }
    if (rows.length < PAGE) break
    const last = rows[rows.length - 1]
    after = [last[0], last[1]]
    if (!res.write(out)) await once(res, "drain")
    out = ""
  }
  res.end(out + "]}")
}

const server = createServer((req, res) => {
  handle(req, res).catch(() => res.destroy())
})
server.listen(Number(port), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
