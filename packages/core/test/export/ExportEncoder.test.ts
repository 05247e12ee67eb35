import { describe, expect, it } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ExportEncoder from "../../src/export/ExportEncoder.js"
import * as ExportSubmissions from "../../src/export/ExportSubmissions.js"
import * as FileDataEncoder from "../../src/read/FileDataEncoder.js"
import * as GetFileData from "../../src/read/GetFileData.js"
import { type FileId, timestampFromEpochMillis } from "../../src/shared/FileData.js"
import { AccessDenied, FileNotFound, InvalidRequest } from "../../src/shared/FileDataError.js"
import { input } from "../utils/Requests.js"
import * as TestFileRepository from "../utils/TestFileRepository.js"
import * as TestRateLimiter from "../utils/TestRateLimiter.js"

const JAN_1 = Date.UTC(2024, 0, 1)

type Content = Record<string, string>

const repositoryOf = (contents: ReadonlyArray<Content>, pageSize = 3) =>
  TestFileRepository.make({
    users: [{ id: "alice", apiKeys: ["alice-key"] }],
    files: [
      {
        id: "f",
        ownerId: "alice",
        submissions: contents.map((content, i) => ({
          createdDate: timestampFromEpochMillis(JAN_1 + Math.floor(i / 2) * 1000),
          content
        }))
      }
    ],
    pageSize
  })

const exported = (
  repository: TestFileRepository.TestFileRepository,
  query: Partial<ExportSubmissions.ExportQuery> = {}
): Effect.Effect<string, unknown> =>
  Effect.flatMap(
    ExportSubmissions.exportFile(repository.repository, {
      fileId: "f" as FileId,
      format: "csv",
      since: undefined,
      until: undefined,
      ...query
    }),
    (reply) => Effect.map(Stream.runCollect(ExportEncoder.encode(reply)), (pieces) => Chunk.join(pieces, ""))
  )

// What the contract says a spreadsheet shows for a submitted text: the text, `'` before a formula's start.
const shown = (text: string) => (/^[=+\-@\t\r]/u.test(text) ? `'${text}` : text)

// Names and values: every character class the CSV rules treat apart, and the names the contract names.
const pieces = FastCheck.constantFrom(
  "a",
  "Z",
  " ",
  ",",
  '"',
  "\r",
  "\n",
  "=",
  "+",
  "-",
  "@",
  "\t",
  "'",
  "é",
  "😀",
  ";"
)
const text = FastCheck.oneof(
  FastCheck.string({ unit: pieces, maxLength: 8 }),
  FastCheck.constantFrom("createdDate", "", "=1+1", "-2", "@SUM(A1)", "\tx", "\r\nx", 'say "hi"', "a,b")
)
const contents = FastCheck.array(FastCheck.dictionary(text, text, { maxKeys: 4, noNullPrototype: true }), {
  maxLength: 12
})

describe("the CSV export", () => {
  it.prop(
    "a standard CSV parser gives back every submitted name and value, the documented prefix aside",
    [contents],
    ([generated]) =>
      Effect.runSync(
        Effect.gen(function* () {
          // The stored content is JSON text, so a name is what JSON keeps of it (a `__proto__` too).
          const stored = generated.map((content) => JSON.parse(JSON.stringify(content)) as Content)
          const csv = yield* exported(repositoryOf(stored))
          const names = [...new Set(stored.flatMap((content) => Object.keys(content)))]
          // Any line break outside quotes ends a record, as some spreadsheets read it: only CRLF may come unquoted.
          const records: Array<Array<string>> = parse(csv, { record_delimiter: ["\r\n", "\n", "\r"] })
          expect(records[0]).toEqual(["createdDate", ...names.map(shown)])
          expect(records.slice(1)).toEqual(
            stored.map((content, i) => [
              timestampFromEpochMillis(JAN_1 + Math.floor(i / 2) * 1000),
              ...names.map((name) => (Object.hasOwn(content, name) ? shown(content[name] as string) : ""))
            ])
          )
          expect(csv.endsWith("\r\n")).toBe(true)
        })
      ),
    { fastCheck: { numRuns: 300 } }
  )

  it.effect("quotes only what needs it, prefixes formulas, header cells too, and keeps an empty name", () =>
    Effect.gen(function* () {
      const csv = yield* exported(
        repositoryOf([
          { "=name": "=1+1", plain: "x", "": "empty name" },
          { createdDate: 'a "b", c', plain: "-5" }
        ])
      )
      expect(csv).toBe(
        [
          "createdDate,'=name,plain,,createdDate",
          "2024-01-01T00:00:00.000Z,'=1+1,x,empty name,",
          '2024-01-01T00:00:00.000Z,,\'-5,,"a ""b"", c"',
          ""
        ].join("\r\n")
      )
    })
  )

  it.effect("a window narrows the rows, not the header: every name of the file up to its read point", () =>
    Effect.gen(function* () {
      const repository = repositoryOf([{ early: "1" }, { early: "2" }, { late: "3" }])
      const csv = yield* exported(repository, { since: JAN_1 + 1000 })
      expect(csv).toBe("createdDate,early,late\r\n2024-01-01T00:00:01.000Z,,3\r\n")
      // An empty window still has its header.
      expect(yield* exported(repository, { since: JAN_1 + 60_000 })).toBe("createdDate,early,late\r\n")
    })
  )

  it.effect("NDJSON lines are the File reply's entries byte for byte, each with its submission's id first", () =>
    Effect.gen(function* () {
      const repository = repositoryOf(
        Array.from({ length: 7 }, (_, i) => ({ n: String(i), "a\nb": "é😀\u2028", [`k${i % 3}`]: '"' }))
      )
      const ndjson = yield* exported(repository, { format: "ndjson" })
      const reply = yield* GetFileData.run(input({ fileId: "f", apiKey: "alice-key" }, [])).pipe(
        Effect.provide(Layer.merge(repository.layer, TestRateLimiter.make().layer))
      )
      const json = Chunk.join(yield* Stream.runCollect(FileDataEncoder.encode(reply)), "")
      const entries = json.slice(json.indexOf('"submissions":[') + '"submissions":['.length, -"]}".length)
      expect(ndjson.endsWith("\n")).toBe(true)
      const lines = ndjson.slice(0, -1).split("\n")
      expect(lines).toHaveLength(7)
      const ids = repository.ids("f")
      // Each line is `{"id":"…",` and the File reply's entry after its opening brace, in reply order.
      const prefixes = ids.map((id) => `{"id":"${id}",`)
      expect(lines.map((line, i) => line.startsWith(prefixes[i] as string))).toEqual(ids.map(() => true))
      expect(lines.map((line, i) => `{${line.slice((prefixes[i] as string).length)}`).join(",")).toBe(entries)
      expect(JSON.parse(lines[0] as string)).toMatchObject({ id: ids[0], content: { n: "0" } })
    })
  )
})

describe("the export's request", () => {
  const run = (body: unknown, repository = repositoryOf([{ a: "1" }])) =>
    ExportSubmissions.run(input(body, [])).pipe(
      Effect.provide(Layer.merge(repository.layer, TestRateLimiter.make().layer)),
      Effect.exit
    )

  it.effect("requires a format of csv or ndjson and checks the window, naming each member", () =>
    Effect.gen(function* () {
      for (const format of [undefined, "xlsx", "CSV", 1, null]) {
        const exit = yield* run({ fileId: "f", apiKey: "alice-key", ...(format === undefined ? {} : { format }) })
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
          expect(failure).toBeInstanceOf(InvalidRequest)
          expect((failure as InvalidRequest).issues.map((issue) => issue.pointer)).toEqual(["/format"])
        }
      }
      const window = yield* run({
        fileId: "f",
        apiKey: "alice-key",
        format: "csv",
        since: "2024-01-02T00:00:00Z",
        until: "2024-01-01T00:00:00Z",
        after: "x"
      })
      const failure = Exit.isFailure(window) && window.cause._tag === "Fail" ? window.cause.error : undefined
      expect((failure as InvalidRequest).issues.map((issue) => issue.pointer).sort()).toEqual(["/after", "/until"])
    })
  )

  it.effect("refuses as the other operations do: an unknown key, a file of another user, no such file", () =>
    Effect.gen(function* () {
      const repository = TestFileRepository.make({
        users: [
          { id: "alice", apiKeys: ["alice-key"] },
          { id: "bob", apiKeys: ["bob-key"] }
        ],
        files: [{ id: "f", ownerId: "alice" }]
      })
      const failureOf = (exit: Exit.Exit<unknown, unknown>) =>
        Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(failureOf(yield* run({ fileId: "f", apiKey: "nobody", format: "csv" }, repository))).toBeInstanceOf(
        AccessDenied
      )
      expect(failureOf(yield* run({ fileId: "f", apiKey: "bob-key", format: "csv" }, repository))).toBeInstanceOf(
        AccessDenied
      )
      expect(failureOf(yield* run({ fileId: "g", apiKey: "alice-key", format: "csv" }, repository))).toBeInstanceOf(
        FileNotFound
      )
      const operator = yield* Effect.exit(
        ExportSubmissions.exportFile(repository.repository, {
          fileId: "g" as FileId,
          format: "csv",
          since: undefined,
          until: undefined
        })
      )
      expect(failureOf(operator)).toBeInstanceOf(FileNotFound)
    })
  )

  it("names the attachment after the file id, safely", () => {
    expect(ExportEncoder.contentDisposition("file-1", "csv")).toBe(
      "attachment; filename=\"file-1.csv\"; filename*=UTF-8''file-1.csv"
    )
    expect(ExportEncoder.contentDisposition('a "b"/ é\r\n', "ndjson")).toBe(
      "attachment; filename=\"a__b___é__.ndjson\"; filename*=UTF-8''a%20%22b%22%2F%20%C3%A9%0D%0A.ndjson".replace(
        "é",
        "_"
      )
    )
    expect(ExportEncoder.fileName("..", "csv")).toBe("_..csv")
  })
})
