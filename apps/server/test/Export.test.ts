// The contract's "Export" (`POST /api/v1/file-data/export`) as an outside client sees it: the server (in this
// process) over HTTP, fed by the CLI. Both formats with their header fields, CSV read back by a standard parser, NDJSON
// lines against the File reply byte for byte, windows, the refusals of the other operations, gzip, and the
// header growing with what the CLI appends (and not with an append refused). On SQLite, and on PostgreSQL +
// Redis when TEST_DATABASE_URL and TEST_REDIS_URL are set (skipped, saying why, without them).

import { randomBytes } from "node:crypto"
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { createRequire } from "node:module"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Processes, TempDirectory, TestServices } from "@filedata/testing"
import { parse } from "csv-parse/sync"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const { finish, root, startBuilt } = Processes

const fileDataPath = "/api/v1/file-data"
const exportPath = "/api/v1/file-data/export"

interface Submission {
  readonly createdDate: string
  readonly content: Record<string, string>
}

interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly bytes: Buffer
  readonly text: string
}

// node:http, not fetch: fetch asks for compression and undoes it itself.
const send = (base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, base.replace("0.0.0.0", "127.0.0.1")),
      { method: "POST", headers: { "content-type": "application/json", ...headers } },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("error", reject)
        res.on("end", () => {
          const bytes = Buffer.concat(chunks)
          const plain = res.headers["content-encoding"] === "gzip" ? gunzipSync(bytes) : bytes
          resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, text: plain.toString("utf8") })
        })
      }
    )
    req.on("error", reject)
    req.end(JSON.stringify(body))
  })

const at = (second: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, second)).toISOString()

// Names that need quoting, that repeat the first column's, that are empty or break lines; values that a
// spreadsheet would run as formulas, or that hold every character CSV treats apart.
const odd: ReadonlyArray<Submission> = [
  { createdDate: at(2), content: { email: "a@example.com", "a,b": "x", createdDate: "=1+1" } },
  { createdDate: at(0), content: { "": "empty name", 'say "hi"': '"quoted", twice\r\n', email: "@SUM(A1)" } },
  { createdDate: at(1), content: { "line\nbreak": "\tTAB", note: "-5", unicode: "é 😀 \u2028" } },
  { createdDate: at(1), content: { email: "+33 1 23", note: "'=already" } }
]
// Reply order: ascending createdDate, ties in insertion order.
const oddInReplyOrder = [odd[1], odd[2], odd[3], odd[0]] as ReadonlyArray<Submission>
const oddNames = ["email", "a,b", "createdDate", "", 'say "hi"', "line\nbreak", "note", "unicode"]

const big: ReadonlyArray<Submission> = Array.from({ length: 3_000 }, (_, i) => ({
  createdDate: new Date(Date.UTC(2024, 1, 1) + i * 1_000).toISOString(),
  content: { email: `sender-${i}@example.com`, message: `message ${i} `.repeat(6) }
}))

const fileOf = (id: string, userId: string, submissions: ReadonlyArray<Submission>) => ({
  id,
  userId,
  name: id,
  creationDate: "2024-01-01T00:00:00.000Z",
  submissions
})

const shown = (text: string) => (/^[=+\-@\t\r]/u.test(text) ? `'${text}` : text)

// The CSV as a spreadsheet reads it: records split only on CRLF outside quotes.
const records = (text: string): Array<Array<string>> => parse(text, { record_delimiter: ["\r\n", "\n", "\r"] })

const expectExportFields = (reply: Reply, contentType: string, fileName: string) => {
  expect(reply.status, reply.text).toBe(200)
  expect(reply.headers["content-type"]).toBe(contentType)
  expect(reply.headers["content-disposition"]).toMatch(new RegExp(`^attachment; filename="${fileName}"; filename\\*=`))
  expect(reply.headers["cache-control"]).toBe("no-store")
  expect(reply.headers["x-content-type-options"]).toBe("nosniff")
  expect(reply.headers.vary).toBe("Accept-Encoding")
  expect(reply.headers["x-request-id"]).toMatch(/\S/)
  expect(reply.headers.ratelimit).toMatch(/"api-key";r=\d+/)
}

// An NDJSON export's lines: each `{"id":"sub_…",` then the File reply's entry after its opening brace. Gives the ids,
// and the lines as the File reply writes its entries.
const ndjsonLines = (text: string): { readonly ids: Array<string>; readonly entries: Array<string> } => {
  expect(text.endsWith("\n")).toBe(true)
  const ids: Array<string> = []
  const entries = text
    .slice(0, -1)
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => {
      const match = /^\{"id":"(sub_[A-Za-z0-9_-]+)",/.exec(line)
      expect(match, line.slice(0, 60)).not.toBeNull()
      ids.push(match?.[1] ?? "")
      return `{${line.slice(match?.[0].length ?? 0)}`
    })
  return { ids, entries }
}

/** What every storage shows: the formats, a window, the refusals, and the header after appends. */
// With the CLI as a process: its export and the appends (`withCli`); see the PostgreSQL suite for why not there.
const scenario = async (base: string, env: Record<string, string>, dir: string, apiKey: string, withCli: boolean) => {
  const body = { fileId: "odd", apiKey }

  const csv = await send(base, exportPath, { ...body, format: "csv" })
  expectExportFields(csv, "text/csv; charset=utf-8", "odd.csv")
  expect(csv.text.endsWith("\r\n")).toBe(true)
  expect(records(csv.text)).toEqual([
    ["createdDate", ...oddNames.map(shown)],
    ...oddInReplyOrder.map((submission) => [
      submission.createdDate,
      ...oddNames.map((name) => shown(submission.content[name] ?? ""))
    ])
  ])

  const ndjson = await send(base, exportPath, { ...body, format: "ndjson" })
  expectExportFields(ndjson, "application/x-ndjson", "odd.ndjson")
  const whole = await send(base, fileDataPath, body)
  const entries = whole.text.slice(whole.text.indexOf('"submissions":[') + '"submissions":['.length, -"]}".length)
  const lines = ndjsonLines(ndjson.text)
  expect(lines.entries.join(",")).toBe(entries)
  expect(lines.entries.map((line) => JSON.parse(line))).toEqual(oddInReplyOrder)
  // The ids of the incremental read, in the same order.
  const read = await send(base, "/api/v1/file-data/submissions", body)
  expect(lines.ids).toEqual(JSON.parse(read.text).submissions.map((submission: { id: string }) => submission.id))

  if (withCli) {
    // The CLI writes the same bytes to stdout, and nothing else: no progress off a terminal.
    const cli = await finish(startBuilt("cli", ["export", "--file", "odd", "--format", "csv"], env))
    expect(cli.code, cli.stderr).toBe(0)
    expect(cli.stdout).toBe(csv.text)
    expect(cli.stderr).toBe("")
    const cliNdjson = await finish(
      startBuilt("cli", ["export", "--format", "ndjson", "--file", "odd", "--since", at(1), "--until", at(2)], env)
    )
    expect(ndjsonLines(cliNdjson.stdout).entries).toEqual(
      [odd[2], odd[3]].map((submission) => JSON.stringify(submission))
    )
    const unknown = await finish(startBuilt("cli", ["export", "--file", "missing", "--format", "csv"], env))
    expect([unknown.code, unknown.stdout, unknown.stderr.trim()]).toEqual([1, "", "no file has this id"])
    for (const wrong of [
      ["--file", "odd", "--format", "xlsx"],
      ["--file", "odd"],
      ["--file", "odd", "--format", "csv", "--since", "yesterday"]
    ]) {
      const refused = await finish(startBuilt("cli", ["export", ...wrong], env))
      expect(refused.code, wrong.join(" ")).toBe(2)
      expect(refused.stdout).toBe("")
    }
  }
  // A window narrows the rows; the header still lists every name of the file.
  const window = await send(base, exportPath, { ...body, format: "csv", since: at(1), until: at(2) })
  expect(records(window.text)).toEqual([
    ["createdDate", ...oddNames.map(shown)],
    ...[odd[2], odd[3]].map((submission) => [
      submission?.createdDate,
      ...oddNames.map((name) => shown(submission?.content[name] ?? ""))
    ])
  ])

  // The other operations' refusals, naming each member.
  const refused = await send(base, exportPath, { ...body, format: "xlsx", since: at(3), until: at(2), limit: 1 })
  expect(refused.status).toBe(422)
  expect(refused.headers["content-type"]).toBe("application/problem+json")
  expect(
    JSON.parse(refused.text)
      .errors.map((issue: { pointer: string }) => issue.pointer)
      .sort()
  ).toEqual(["/format", "/limit", "/until"])
  expect((await send(base, exportPath, { fileId: "odd", apiKey })).status).toBe(422)
  expect((await send(base, exportPath, { fileId: "odd", apiKey: "nobody", format: "csv" })).status).toBe(403)
  expect((await send(base, exportPath, { fileId: "bobs", apiKey, format: "csv" })).status).toBe(403)
  expect((await send(base, exportPath, { fileId: "missing", apiKey, format: "csv" })).status).toBe(404)

  if (!withCli) return
  // Names an append brings come after the file's; an append refused whole brings none.
  const refusedAppend = TempDirectory.write(dir, "refused.json", {
    files: [
      { id: "odd", submissions: [{ createdDate: at(9), content: { ghost: "boo" } }] },
      { id: "missing", submissions: [] }
    ]
  })
  expect((await finish(startBuilt("cli", ["append", refusedAppend], env))).code).toBe(1)
  const appendFile = TempDirectory.write(dir, "append.json", {
    files: [
      { id: "odd", submissions: [{ createdDate: at(-1), content: { added: "first in reply order", email: "" } }] }
    ]
  })
  const appended = await finish(startBuilt("cli", ["append", appendFile], env))
  expect(appended.code, appended.stderr).toBe(0)
  const after = records((await send(base, exportPath, { ...body, format: "csv" })).text)
  expect(after[0]).toEqual(["createdDate", ...oddNames.map(shown), "added"])
  expect(after[1]).toEqual([at(-1), "", ...oddNames.slice(1).map(() => ""), "first in reply order"])
  expect(after).toHaveLength(odd.length + 2)
}

describe("the export on the server with SQLite", () => {
  const dir = TempDirectory.make("export")
  const fixture = {
    users: [
      { id: "alice", apiKeys: ["alice-key", "alice-big"] },
      { id: "bob", apiKeys: ["bob-key"] }
    ],
    files: [
      fileOf("odd", "alice", odd),
      fileOf("big", "alice", big),
      fileOf("bobs", "bob", odd.slice(0, 1)),
      fileOf('forms/é "x"', "alice", odd.slice(0, 1))
    ]
  }
  const env: Record<string, string> = {
    DATABASE_URL: `file:${join(dir, "filedata.db")}`,
    PORT: "0",
    HOST: "127.0.0.1",
    RATE_LIMIT_MAX: "1000",
    RATE_LIMIT_IP_MAX: "1000000",
    RATE_LIMIT_WINDOW_MS: "60000"
  }
  let server: InProcess.Served | undefined
  let base = ""

  beforeAll(async () => {
    await TestServer.importInto(env, fixture)
    server = await InProcess.serve(env)
    base = server.base
  }, 60_000)

  afterAll(async () => {
    if (server !== undefined) await InProcess.stop(server)
  }, 60_000)

  it("CSV and NDJSON, a window, the refusals, and the header after appends", async () => {
    await scenario(base, env, dir, "alice-key", true)
  }, 60_000)

  it("streams a big file in many pieces, identity and gzip alike, named safely after an odd file id", async () => {
    const body = { fileId: "big", apiKey: "alice-big" }
    const csv = await send(base, exportPath, { ...body, format: "csv" })
    expect(csv.headers["content-length"]).toBeUndefined()
    const gzipped = await send(base, exportPath, { ...body, format: "csv" }, { "accept-encoding": "gzip" })
    expect(gzipped.headers["content-encoding"]).toBe("gzip")
    expect(gzipped.text).toBe(csv.text)
    expect(records(csv.text)).toEqual([
      ["createdDate", "email", "message"],
      ...big.map((submission) => [submission.createdDate, submission.content.email, submission.content.message])
    ])
    const ndjson = await send(base, exportPath, { ...body, format: "ndjson" }, { "accept-encoding": "gzip" })
    expect(ndjsonLines(ndjson.text).entries.map((line) => JSON.parse(line))).toEqual(big)

    const named = await send(base, exportPath, { fileId: 'forms/é "x"', apiKey: "alice-key", format: "csv" })
    expect(named.headers["content-disposition"]).toBe(
      "attachment; filename=\"forms____x_.csv\"; filename*=UTF-8''forms%2F%C3%A9%20%22x%22.csv"
    )
  }, 60_000)
})

const skipReasons = [
  ...(TestServices.databaseUrl === undefined ? [TestServices.databaseUnset] : []),
  ...(TestServices.redisUrl === undefined ? [TestServices.redisUnset] : [])
]
for (const reason of skipReasons) console.warn(`Export on PostgreSQL + Redis SKIPPED: ${reason}`)

// The `pg` driver the PostgreSQL adapter uses, reached through that package. Only what this file calls is typed.
interface PgClient {
  connect(): Promise<void>
  query(text: string): Promise<unknown>
  end(): Promise<void>
}
const admin = async (statement: string) => {
  const fromPostgres = createRequire(join(root, "packages/postgres/package.json"))
  const fromSqlPg = createRequire(fromPostgres.resolve("@effect/sql-pg/package.json"))
  const pg = fromSqlPg("pg") as { Client: new (options: { connectionString: string }) => PgClient }
  const client = new pg.Client({ connectionString: TestServices.databaseUrl ?? "" })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

if (skipReasons.length > 0) {
  describe("the export on the server with PostgreSQL and Redis", () => {
    it.skip(`SKIPPED: ${skipReasons.join("; ")}`, () => {})
  })
} else {
  describe("the export on the server with PostgreSQL and Redis", () => {
    const run = `${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
    const database = `filedata_export_${run}`
    const dir = TempDirectory.make("export-pg")
    const apiKey = `pg-export-${run}`
    let env: Record<string, string> = {}
    let server: InProcess.Served | undefined
    let base = ""

    beforeAll(async () => {
      await admin(`CREATE DATABASE ${database}`)
      const url = new URL(TestServices.databaseUrl ?? "")
      url.pathname = `/${database}`
      env = {
        DATABASE_URL: url.toString(),
        DATABASE_POOL_MAX: "4",
        REDIS_URL: TestServices.redisUrl ?? "",
        RATE_LIMIT_FAILURE_MODE: "closed",
        RATE_LIMIT_MAX: "1000",
        RATE_LIMIT_IP_MAX: "1000000",
        RATE_LIMIT_WINDOW_MS: "60000",
        PORT: "0",
        HOST: "127.0.0.1"
      }
      const fixture = {
        users: [
          { id: "alice", apiKeys: [apiKey] },
          { id: "bob", apiKeys: [`pg-bob-${run}`] }
        ],
        files: [fileOf("odd", "alice", odd), fileOf("bobs", "bob", odd.slice(0, 1))]
      }
      await TestServer.importInto(env, fixture)
      server = await InProcess.serve(env)
      base = server.base
    }, 120_000)

    afterAll(async () => {
      try {
        if (server !== undefined) await InProcess.stop(server)
      } finally {
        await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      }
    }, 120_000)

    it("CSV and NDJSON, a window, the refusals, and the header after appends", async () => {
      // Not the CLI: on PostgreSQL a CLI command started while the server runs writes its output and then does
      // not exit (seen with `user list` too, not only `export`), which is the storage layer's to fix.
      await scenario(base, env, dir, apiKey, false)
    }, 60_000)
  })
}
