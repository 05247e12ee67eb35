// The baseline of `pnpm bench`: the same endpoint as the strongest plain implementation a careful engineer
// would write for speed, on node:http and better-sqlite3 over the same database file, with no framework. Not
// shipped; only measured against (docs/performance.md#the-baseline).
//
// Per request it does only what the answer needs: the body read on plain events and checked as the contract
// asks (Content-Type, 64 KiB, JSON object of exactly two non-empty strings: 422), one statement for the access
// question, one statement that returns the whole submissions array as one UTF-8 buffer assembled inside SQLite,
// and one `end` of `Buffer.concat([head, array, tail])` with four header fields. It does not stream: a reply
// sits whole in memory. No rate limit, no log line, no compression.
//
// The handler is apart from the server (`bench/baseline.mjs`) so that `bench/route.mjs` can run it in process
// beside filedata's route, on the same fake requests.

import { hash } from "node:crypto"

const PATH = "/api/v1/file-data"
const MAX_BYTES = 64 * 1024
const TAIL = Buffer.from("]}")

const problems = {
  403: ["access_denied", "Forbidden", "The API key is not valid for this file."],
  404: ["file_not_found", "Not Found", "No file with this id."],
  405: ["method_not_allowed", "Method Not Allowed", "Use POST."],
  422: ["validation_failed", "Unprocessable Content", "The request body is not valid."]
}
const notFound = ["not_found", "Not Found", "No such path."]
const problemBody = (status, [code, title, detail], issues) =>
  Buffer.from(
    JSON.stringify({ type: `urn:filedata:problem:${code}`, title, status, detail, code, ...(issues && { issues }) })
  )
// Problems are constant, so each body is made once.
export const bodies = {
  403: problemBody(403, problems[403]),
  404: problemBody(404, problems[404]),
  405: problemBody(405, problems[405]),
  pathNotFound: problemBody(404, notFound),
  contentType: problemBody(422, problems[422], [{ pointer: "", detail: "Content-Type must be application/json" }]),
  tooLarge: problemBody(422, problems[422], [{ pointer: "", detail: `must be at most ${MAX_BYTES} bytes` }]),
  json: problemBody(422, problems[422], [{ pointer: "", detail: "must be a JSON object" }]),
  fields: problemBody(422, problems[422], [
    { pointer: "", detail: "must have exactly the fields fileId and apiKey, each a non-empty string" }
  ])
}

export const problem = (res, status, body) => {
  res.writeHead(status, {
    "content-type": "application/problem+json",
    "content-length": body.length,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff"
  })
  res.end(body)
}

const isJson = (contentType) => {
  if (contentType === undefined) return false
  const semicolon = contentType.indexOf(";")
  return (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase() === "application/json"
}

/** The request listener of the baseline on `db` (a better-sqlite3 database, read-only). */
export const handler = (db) => {
  // The access question in one statement: no row is an unknown (or revoked) key, a row without file columns is
  // a file that does not exist, and the owner is compared below. The key is looked up first through its unique
  // index, the file by its primary key.
  const access = db
    .prepare(
      `SELECT k.user_id, f.user_id, f.name, f.creation_date, f.public_availability, f.submission_counter,
         f.visit_counter
       FROM api_keys AS k LEFT JOIN files AS f ON f.id = ?
       WHERE k.key_hash = ? AND k.revoked_at IS NULL`
    )
    .raw(true)

  // Every stored entry of the file (`{"createdDate":…,"content":…}`, rendered at import), joined with commas in
  // reply order inside SQLite and handed over as one blob, so no row and no string reaches JavaScript; NULL when
  // the file has no submission. The order comes from the ordered subquery: SQLite keeps a FROM-subquery's ORDER
  // BY when the outer query uses an aggregate other than count/min/max, and does not flatten it, so the subquery
  // runs as a co-routine walking the index (file_id, created_date, seq) in order, with no sort. The documented
  // `group_concat(entry, ',' ORDER BY created_date, seq)` (SQLite 3.44+) sorts in a temporary B-tree instead:
  // about 3x the time for 100,000 entries (docs/performance.md#the-baseline).
  const array = db
    .prepare(
      `SELECT CAST(group_concat(entry, ',') AS BLOB)
       FROM (SELECT entry FROM submissions WHERE file_id = ? ORDER BY created_date, seq)`
    )
    .pluck(true)

  return listener((res, fileId, apiKey) => {
    const row = access.get(fileId, hash("sha256", apiKey, "hex"))
    if (row === undefined) return problem(res, 403, bodies[403])
    const [userId, ownerId, name, creationDate, publicAvailability, submissionCounter, visitCounter] = row
    if (ownerId === null) return problem(res, 404, bodies[404])
    if (ownerId !== userId) return problem(res, 403, bodies[403])
    const head = replyHead(name, creationDate, publicAvailability === 1, submissionCounter, visitCounter)
    reply(res, head, array.get(fileId))
  })
}

/** The 200 reply's head, up to the submissions array's opening bracket. */
export const replyHead = (name, creationDate, publicAvailability, submissionCounter, visitCounter) =>
  Buffer.from(
    `{"name":${JSON.stringify(name)},"creationDate":"${new Date(creationDate).toISOString()}",` +
      `"publicAvailability":${publicAvailability},"SubmissionCounter":${submissionCounter},` +
      `"VisitCounter":${visitCounter},"submissions":[`
  )

/** The 200 reply of `head`, the joined entries (or null) and the closing bytes. */
export const reply = (res, head, entries) => {
  const body = entries === null ? Buffer.concat([head, TAIL]) : Buffer.concat([head, entries, TAIL])
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": body.length,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff"
  })
  res.end(body)
}

// The body as the contract checks it: `answer(res, fileId, apiKey)` for a valid one, a 422 otherwise.
const parsed = (answer) => (res, bytes) => {
  let body
  try {
    body = JSON.parse(bytes.toString("utf8"))
  } catch {
    return problem(res, 422, bodies.json)
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return problem(res, 422, bodies.json)
  const { fileId, apiKey } = body
  if (
    typeof fileId !== "string" ||
    typeof apiKey !== "string" ||
    fileId === "" ||
    apiKey === "" ||
    Object.keys(body).length !== 2
  ) {
    return problem(res, 422, bodies.fields)
  }
  return answer(res, fileId, apiKey)
}

/**
 * A request listener checking the route, method, Content-Type and size, reading the body and calling
 * `answer(res, fileId, apiKey)` for a valid one; a thrown error (or a rejected promise) destroys the socket.
 */
export const listener = (answerValid) => {
  const answer = parsed(answerValid)
  return (req, res) => {
    const url = req.url
    const query = url.indexOf("?")
    if ((query === -1 ? url : url.slice(0, query)) !== PATH) return problem(res, 404, bodies.pathNotFound)
    if (req.method !== "POST") return problem(res, 405, bodies[405])
    if (!isJson(req.headers["content-type"])) return problem(res, 422, bodies.contentType)
    if (Number(req.headers["content-length"]) > MAX_BYTES) return problem(res, 422, bodies.tooLarge)
    const chunks = []
    let size = 0
    const onData = (chunk) => {
      size += chunk.length
      if (size > MAX_BYTES) {
        req.off("data", onData)
        req.off("end", onEnd)
        req.resume()
        problem(res, 422, bodies.tooLarge)
      } else chunks.push(chunk)
    }
    const onEnd = () => {
      try {
        const answered = answer(res, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
        if (answered instanceof Promise) answered.catch(() => res.destroy())
      } catch {
        res.destroy()
      }
    }
    req.on("data", onData)
    req.on("end", onEnd)
  }
}
