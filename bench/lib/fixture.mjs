// Seeded fixtures for the bench scripts, written as a stream so a million submissions never sit in memory.

import { once } from "node:events"
import { createWriteStream } from "node:fs"

// mulberry32: a small seeded generator, so every run measures the same data.
export const random = (seed) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const FIELDS = ["email", "name", "phone", "company", "message", "country", "city", "topic", "budget", "source"]

// A submission's content of 5 to 8 fields drawn from `next`; with `contentBytes`, padded to about that many bytes
// by a free-text "message".
export const contentOf = (next, contentBytes) => {
  const count = 5 + Math.floor(next() * 4)
  const content = {}
  for (let i = 0; i < count; i++) content[FIELDS[i]] = `${FIELDS[i]}-${Math.floor(next() * 1e9).toString(36)}`
  if (contentBytes !== undefined) {
    const room = contentBytes - JSON.stringify(content).length - 14
    let text = ""
    while (text.length < room) text += `${Math.floor(next() * 1e12).toString(36)} `
    content.message = text.slice(0, Math.max(0, room))
  }
  return content
}

// Users `${prefix}user-U` with the key `${prefix}bench-key-U`; files `${prefix}file-F` owned by user F mod users.
// The prefix lets one database take several fixtures, since an import refuses ids that already exist.
// With `contentBytes`, each submission's content is padded as `contentOf` does. With `mark` ({ every, name,
// value }), every `every`-th submission of a file also has `name: value`, for an erasure by content to find; the
// draws are the same, so the other submissions are those of the same shape without it.
export const writeFixture = async (path, { files, submissionsPerFile, users, prefix = "", contentBytes, mark }) => {
  const next = random(42)
  const out = createWriteStream(path)
  const write = (text) => (out.write(text) ? undefined : once(out, "drain"))
  await write(`{"users":[`)
  for (let u = 0; u < users; u++) {
    await write(`${u ? "," : ""}{"id":"${prefix}user-${u}","apiKeys":["${prefix}bench-key-${u}"]}`)
  }
  await write(`],"files":[`)
  const start = Date.parse("2024-01-01T00:00:00.000Z")
  for (let f = 0; f < files; f++) {
    await write(
      `${f ? "," : ""}{"id":"${prefix}file-${f}","userId":"${prefix}user-${f % users}","name":"Form ${f}",` +
        `"creationDate":"2023-12-01T00:00:00.000Z","publicAvailability":${f % 2 === 0},"VisitCounter":${f * 7},"submissions":[`
    )
    let at = start
    for (let s = 0; s < submissionsPerFile; s++) {
      at += Math.floor(next() * 60_000)
      const content = contentOf(next, contentBytes)
      if (mark !== undefined && s % mark.every === mark.every - 1) content[mark.name] = mark.value
      await write(`${s ? "," : ""}{"createdDate":"${new Date(at).toISOString()}","content":${JSON.stringify(content)}}`)
    }
    await write("]}")
  }
  await write("]}")
  out.end()
  await once(out, "finish")
}
