// `node bench/request-body.mjs`: what reading a request body costs per request, in isolation (no server, no
// sockets), before and after the body rules of docs/api.md#request: a member named twice, a charset other
// than utf-8, the text rules of ids and keys. "before" is a copy of the code as it was (UTF-8 decoding,
// JSON.parse, the core's check of the common shape); "after" runs the same steps with the built rules in them.
// Each body is timed in rounds of many calls; the median round is printed in nanoseconds per request. Figures: docs/performance.md#request-body-rules.
// Options: --rounds 15  --calls 200000

import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { commandLine } from "./lib/options.mjs"
import { build, root } from "./lib/processes.mjs"

const option = commandLine(import.meta.url, ["calls", "rounds"])
const rounds = Number(option("rounds", "15"))
const calls = Number(option("calls", "200000"))

build()
const load = (path) => import(pathToFileURL(join(root, path)).href)
const RequestBody = await load("apps/server/dist/RequestBody.js")
const { TextRules } = await load("packages/core/dist/index.js")

// The code before the rules, as it was: decode, parse, and the core's common-shape check.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })
const isJsonBefore = (contentType) =>
  contentType !== undefined && (contentType.split(";", 1)[0] ?? "").trim().toLowerCase() === "application/json"
const commonShapeBefore = (body) => {
  if (typeof body !== "object" || body === null || Object.getPrototypeOf(body) !== Object.prototype) return undefined
  let fields = 0
  for (const key in body) {
    if (key !== "fileId" && key !== "apiKey") return undefined
    fields++
  }
  const { apiKey, fileId } = body
  return fields === 2 && typeof fileId === "string" && fileId !== "" && typeof apiKey === "string" && apiKey !== ""
    ? { fileId, apiKey }
    : undefined
}
const before = (contentType, bytes) => {
  if (!isJsonBefore(contentType)) return undefined
  const text = utf8.decode(bytes)
  if (text.trim() === "") return undefined
  return commonShapeBefore(JSON.parse(text))
}

// The same steps with the rules in them: the built `checkContentType` and `parse` (the duplicate check), then
// the common-shape check with the text rules, as `GetFileData.parseRequest` does it before building its
// request. What both sides leave out (running the effect, building the branded request) is the same before
// and after, so the difference is the rules' cost.
const commonShapeAfter = (body) => {
  if (typeof body !== "object" || body === null || Object.getPrototypeOf(body) !== Object.prototype) return undefined
  let fields = 0
  for (const key in body) {
    if (key !== "fileId" && key !== "apiKey") return undefined
    fields++
  }
  const { apiKey, fileId } = body
  return fields === 2 &&
    typeof fileId === "string" &&
    TextRules.isId(fileId) &&
    typeof apiKey === "string" &&
    TextRules.isNonEmptyText(apiKey)
    ? { fileId, apiKey }
    : undefined
}
const after = (contentType, bytes) => {
  if (RequestBody.checkContentType(contentType) !== undefined) return undefined
  const parsed = RequestBody.parse(bytes)
  return parsed._tag === "Right" ? commonShapeAfter(parsed.right) : undefined
}

const key = "fdk_3q2-7wVbX9yFzLk0mNpQrStUvWxYz0123456789abcdE"
const bodies = {
  "common request (98 bytes)": `{"fileId":"demo-contact-form","apiKey":"${key}"}`,
  "a colon in the id (full scan)": `{"fileId":"urn:form:contact","apiKey":"${key}"}`,
  "non-ASCII id": `{"fileId":"формуляр-контакт-😀","apiKey":"${key}"}`,
  "member named twice (refused)": `{"fileId":"demo-contact-form","apiKey":"x","apiKey":"${key}"}`,
  "8,000 unknown members (refused)": `{${Array.from({ length: 8000 }, (_, i) => `"${i.toString(36)}":0`).join(",")}}`
}
const contentType = "application/json"

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const time = (run, bytes, n) => {
  const start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) run(contentType, bytes)
  return Number(process.hrtime.bigint() - start) / n
}

console.log(`node ${process.version}, median of ${rounds} rounds, ns per request`)
console.log("body".padEnd(34), "before".padStart(10), "after".padStart(10), "added".padStart(10))
for (const [name, text] of Object.entries(bodies)) {
  const bytes = Buffer.from(text, "utf8")
  const n = Math.max(50, Math.floor(calls / Math.ceil(bytes.length / 100)))
  const results = { before: [], after: [] }
  time(before, bytes, n)
  time(after, bytes, n)
  for (let round = 0; round < rounds; round++) {
    results.before.push(time(before, bytes, n))
    results.after.push(time(after, bytes, n))
  }
  const [b, a] = [median(results.before), median(results.after)]
  console.log(
    name.padEnd(34),
    b.toFixed(0).padStart(10),
    a.toFixed(0).padStart(10),
    `${a - b >= 0 ? "+" : ""}${(a - b).toFixed(0)}`.padStart(10)
  )
}

// The rules' own steps on the common request, alone: what the request above pays for them.
const DuplicateMembers = await load("apps/server/dist/DuplicateMembers.js")
const common = bodies["common request (98 bytes)"]
const parsedCommon = JSON.parse(common)
const steps = {
  "duplicate check (colons counted)": () => DuplicateMembers.find(common, parsedCommon),
  "duplicate check, full scan": () => DuplicateMembers.scan(common),
  "text rules of fileId and apiKey": () =>
    TextRules.isId(parsedCommon.fileId) && TextRules.isNonEmptyText(parsedCommon.apiKey),
  "Content-Type check": () => RequestBody.checkContentType("application/json; charset=utf-8"),
  "for scale: JSON.parse": () => JSON.parse(common)
}
console.log()
console.log("step on the common request".padEnd(34), "ns".padStart(10))
for (const [name, step] of Object.entries(steps)) {
  const runs = []
  for (let round = 0; round <= rounds; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < calls * 5; i++) step()
    runs.push(Number(process.hrtime.bigint() - start) / (calls * 5))
  }
  console.log(name.padEnd(34), median(runs.slice(1)).toFixed(1).padStart(10))
}
