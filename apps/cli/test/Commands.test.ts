import { execFileSync } from "node:child_process"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { FileData, FileDataError, WebhookStore } from "@filedata/core"
import { ServiceConfig } from "@filedata/runtime"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import type * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { notingProvider, readmeRows } from "../../../packages/runtime/test/utils/ConfigDocs.js"
import * as ApiKeyGenerator from "../src/ApiKeyGenerator.js"
import * as CliError from "../src/CliError.js"
import * as Color from "../src/Color.js"
import * as Commands from "../src/Commands.js"
import * as Progress from "../src/Progress.js"
import * as Stdin from "../src/Stdin.js"
import {
  allKeys,
  cli,
  cliWith,
  findFile,
  keyOwner,
  type Run,
  runInProcess,
  runProcess,
  sqlite,
  submissions,
  tempDir,
  userExists,
  withDatabase,
  writeFixture
} from "./utils.js"

const expectSuccess = (run: Run) => {
  expect(run.stderr).toEqual([])
  expect(Exit.isSuccess(run.exit)).toBe(true)
}

// Failures must end as `Reported` after one or more plain lines, never a defect: exit code 1 in main for a
// command that failed, 2 for a wrong command line.
const expectReported = (run: Run, exitCode: 1 | 2 = 1) => {
  expect(Exit.isFailure(run.exit)).toBe(true)
  if (Exit.isFailure(run.exit)) {
    expect(Cause.isDie(run.exit.cause)).toBe(false)
    expect(Cause.failureOption(run.exit.cause)).toEqual(Option.some(new CliError.Reported({ exitCode })))
    expect(CliError.exitCode(run.exit)).toBe(exitCode)
  }
  expect(run.stderr.join("\n")).not.toMatch(/\n\s+at |FiberFailure|\{ _id:/)
}

const KEY_LINE = /^API key(?: \(shown only now\))?: (\S+)$/

const printedKey = (run: Run): string => {
  const key = run.stdout.map((line) => KEY_LINE.exec(line)?.[1]).find((match) => match !== undefined)
  expect(key).toBeDefined()
  return key ?? ""
}

// JSON.parse makes `__proto__` an own key, as it is in a fixture file; a literal would set the prototype.
const contactContentJson = '{"email":"a@example.com","message":"Hi there","__proto__":"kept","zeta":"","alpha":"ä 😀"}'

const validFixture = {
  users: [
    { id: "user-1", apiKeys: ["user-1-key-a", "user-1-key-b"] },
    { id: "user-2", apiKeys: ["user-2-key"] }
  ],
  files: [
    {
      id: "file-1",
      userId: "user-1",
      name: "Contact form",
      creationDate: "2024-01-01T00:00:00.000Z",
      publicAvailability: true,
      SubmissionCounter: 7,
      VisitCounter: 10,
      submissions: [
        { createdDate: "2024-01-03T09:30:00.000Z", content: { email: "b@example.com" } },
        { createdDate: "2024-01-02T09:30:00.000Z", content: JSON.parse(contactContentJson) }
      ]
    },
    {
      id: "file-2",
      userId: "user-2",
      name: "Empty survey",
      creationDate: "2024-02-01T10:00:00.123+01:00"
    }
  ]
}

describe("import", () => {
  it.effect("reads a pipe as well as a file: a named pipe, as /dev/stdin or <(curl …) give", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const fifo = join(dir, "fixture.pipe")
        execFileSync("mkfifo", [fifo])
        // Opening a pipe to write waits for its reader: written beside the import, not before it.
        const writing = writeFile(fifo, JSON.stringify(validFixture)).then(
          () => undefined,
          (error: unknown) => error
        )
        const run = yield* cli("import", fifo)
        expect(yield* Effect.promise(() => writing)).toBeUndefined()
        expectSuccess(run)
        expect(run.stdout).toEqual(["imported 2 users, 3 API keys, 2 files, 2 submissions"])
        expect(yield* keyOwner("user-2-key")).toEqual(Option.some("user-2"))
      })
    )
  )

  it.effect("loads a valid fixture and every value arrives exactly", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const run = yield* cli("import", writeFixture(dir, "fixture.json", validFixture))
        expectSuccess(run)
        expect(run.stdout).toEqual(["imported 2 users, 3 API keys, 2 files, 2 submissions"])

        const keys = yield* allKeys
        expect(keys.map((key) => key.userId)).toEqual(["user-1", "user-1", "user-2"])
        expect(keys.every((key) => Option.isNone(key.revokedAt))).toBe(true)
        expect(yield* keyOwner("user-1-key-b")).toEqual(Option.some("user-1"))
        expect(yield* keyOwner("user-2-key")).toEqual(Option.some("user-2"))

        expect(yield* findFile("user-1-key-a", "file-1")).toEqual(
          Option.some({
            id: "file-1",
            ownerId: "user-1",
            name: "Contact form",
            creationDate: "2024-01-01T00:00:00.000Z",
            publicAvailability: true,
            SubmissionCounter: 7,
            VisitCounter: 10
          })
        )
        // The contract's defaults, and an offset date stored as the same instant in UTC.
        expect(yield* findFile("user-1-key-a", "file-2")).toEqual(
          Option.some({
            id: "file-2",
            ownerId: "user-2",
            name: "Empty survey",
            creationDate: "2024-02-01T09:00:00.123Z",
            publicAvailability: false,
            SubmissionCounter: 0,
            VisitCounter: 0
          })
        )
        const stored = yield* submissions("file-1")
        expect(stored.map((submission) => submission.createdDate)).toEqual([
          "2024-01-02T09:30:00.000Z",
          "2024-01-03T09:30:00.000Z"
        ])
        expect(stored[0]?.contentJson).toBe(contactContentJson)
        expect(Object.keys(JSON.parse(stored[0]?.contentJson ?? "{}"))).toEqual([
          "email",
          "message",
          "__proto__",
          "zeta",
          "alpha"
        ])
        expect(yield* submissions("file-2")).toEqual([])
      })
    )
  )

  it.effect("reads a relative path from INIT_CWD, the directory pnpm was called in", () =>
    withDatabase(
      (dir) =>
        Effect.gen(function* () {
          writeFixture(dir, "relative.json", { users: [{ id: "relative-user" }] })
          const run = yield* cli("import", "relative.json")
          expectSuccess(run)
          expect(yield* userExists("relative-user")).toBe(true)
        }),
      (dir) => ({ INIT_CWD: dir })
    )
  )

  it.effect("writes nothing when only the last entry is wrong, and names it by JSON path", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const broken = {
          users: [
            { id: "new-1", apiKeys: ["new-1-key"] },
            { id: "new-2", apiKeys: ["new-2-key"] }
          ],
          files: [
            { id: "new-file-1", userId: "new-1", name: "A", creationDate: "2024-01-01T00:00:00.000Z" },
            {
              id: "new-file-2",
              userId: "new-2",
              name: "B",
              creationDate: "2024-01-01T00:00:00.000Z",
              submissions: [
                { createdDate: "2024-01-02T00:00:00.000Z", content: { a: "1" } },
                { createdDate: "2024-01-03T00:00:00.000Z", content: { a: "2" } },
                { createdDate: "yesterday", content: { a: "3" } }
              ]
            }
          ]
        }
        const run = yield* cli("import", writeFixture(dir, "broken.json", broken))
        expectReported(run)
        expect(run.stdout).toEqual([])
        expect(run.stderr).toContainEqual(
          "$.files[1].submissions[2].createdDate: must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
        )
        expect(run.stderr[0]).toMatch(/nothing was written/)
        expect(yield* userExists("new-1")).toBe(false)
        expect(yield* userExists("new-2")).toBe(false)
        expect(yield* allKeys).toEqual([])
        expect(yield* keyOwner("new-1-key")).toEqual(Option.none())
      })
    )
  )

  it.effect("writes nothing when the last entry's id already exists in the database", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expectSuccess(yield* cli("import", writeFixture(dir, "first.json", validFixture)))
        const keysBefore = yield* allKeys
        const clashing = {
          users: [{ id: "user-3", apiKeys: ["user-3-key"] }],
          files: [
            {
              id: "file-3",
              userId: "user-3",
              name: "New",
              creationDate: "2024-01-01T00:00:00.000Z",
              submissions: [{ createdDate: "2024-01-02T00:00:00.000Z", content: { a: "1" } }]
            },
            { id: "file-4", userId: "user-1", name: "New too", creationDate: "2024-01-01T00:00:00.000Z" },
            { id: "file-2", userId: "user-3", name: "Taken", creationDate: "2024-01-01T00:00:00.000Z" }
          ]
        }
        const run = yield* cli("import", writeFixture(dir, "clashing.json", clashing))
        expectReported(run)
        expect(run.stderr.slice(1)).toEqual(["$.files[2].id: already exists"])
        expect(yield* userExists("user-3")).toBe(false)
        expect(yield* findFile("user-1-key-a", "file-3")).toEqual(Option.none())
        expect(yield* findFile("user-1-key-a", "file-4")).toEqual(Option.none())
        expect(yield* submissions("file-3")).toEqual([])
        expect(yield* allKeys).toEqual(keysBefore)
        expect(Option.map(yield* findFile("user-1-key-a", "file-2"), (file) => file.name)).toEqual(
          Option.some("Empty survey")
        )
      })
    )
  )

  it.effect("names a malformed submission and a file of an unknown user in one run", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expectSuccess(yield* cli("import", writeFixture(dir, "first.json", validFixture)))
        const both = {
          users: [{ id: "user-3", apiKeys: ["user-1-key-a"] }],
          files: [
            {
              id: "file-3",
              userId: "user-3",
              name: "Broken",
              creationDate: "2024-01-01T00:00:00.000Z",
              submissions: [{ createdDate: "2024-01-02T00:00:00.000Z", content: { a: 1 } }]
            },
            { id: "file-4", userId: "nobody", name: "Orphan", creationDate: "2024-01-01T00:00:00.000Z" },
            { id: "file-1", userId: "user-3", name: "Taken", creationDate: "2024-01-01T00:00:00.000Z" }
          ]
        }
        const run = yield* cli("import", writeFixture(dir, "both.json", both))
        expectReported(run)
        expect(run.stderr).toEqual([
          "the fixture was rejected and nothing was written (4 problems):",
          "$.users[0].apiKeys[0]: is already in use",
          "$.files[0].submissions[0].content.a: must be a string",
          "$.files[1].userId: is not a user of this fixture or of the database",
          "$.files[2].id: already exists"
        ])
        expect(yield* userExists("user-3")).toBe(false)
        expect(yield* findFile("user-1-key-a", "file-4")).toEqual(Option.none())
      })
    )
  )

  it.effect("prints at most 20 issues and counts the rest", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const files = Array.from({ length: 25 }, (_, i) => ({
          id: `f${i}`,
          userId: "u",
          creationDate: "2024-01-01T00:00:00.000Z"
        }))
        const run = yield* cli("import", writeFixture(dir, "many.json", { users: [{ id: "u" }], files }))
        expectReported(run)
        expect(run.stderr).toHaveLength(1 + CliError.MAX_ISSUE_LINES + 1)
        expect(run.stderr[1]).toBe("$.files[0].name: is required")
        expect(run.stderr[20]).toBe("$.files[19].name: is required")
        expect(run.stderr[21]).toBe("and 5 more")
        expect(yield* userExists("u")).toBe(false)
      })
    )
  )

  it.effect("refuses malformed JSON with the file name", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const path = writeFixture(dir, "malformed.json", '{ "users": [ { "id": "x" }, ] }')
        const run = yield* cli("import", path)
        expectReported(run)
        expect(run.stderr).toHaveLength(1)
        expect(run.stderr[0]).toBe(`${path} is not valid JSON: unexpected "]", expected a value at line 1, column 29`)
        expect(yield* userExists("x")).toBe(false)
      })
    )
  )

  it.effect("streams a file of many chunks, users after files, and a file's id after its submissions", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const count = 5000
        const document = {
          files: [
            {
              submissions: Array.from({ length: count }, (_, i) => ({
                createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
                content: { index: String(i), note: "é😀".repeat(10) }
              })),
              name: "Big",
              creationDate: "2024-01-01T00:00:00.000Z",
              userId: "late-user",
              id: "big"
            }
          ],
          users: [{ id: "late-user", apiKeys: ["late-key"] }]
        }
        const run = yield* cli("import", writeFixture(dir, "big.json", document))
        expectSuccess(run)
        expect(run.stdout).toEqual([`imported 1 user, 1 API key, 1 file, ${count} submissions`])
        const stored = yield* submissions("big")
        expect(stored.map((row) => JSON.parse(row.contentJson).index)).toEqual(
          Array.from({ length: count }, (_, i) => String(i))
        )
        expect(yield* keyOwner("late-key")).toEqual(Option.some("late-user"))
      })
    )
  )

  it.effect("shows progress on a terminal, on stderr only, and clears it at the end", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const written: Array<string> = []
        const terminal: Progress.Terminal = { isTTY: true, write: (text) => Effect.sync(() => void written.push(text)) }
        const path = writeFixture(dir, "fixture.json", validFixture)
        const run = yield* cli("import", path).pipe(Effect.provideService(Progress.ProgressTerminal, terminal))
        expectSuccess(run)
        expect(run.stdout).toEqual(["imported 2 users, 3 API keys, 2 files, 2 submissions"])
        // The test clock stands still, so the line is drawn once, when the first chunk is read; no escape codes.
        const shown = Progress.line(1, 1, 0)
        expect(written).toEqual([`\r${shown}`, `\r${" ".repeat(shown.length)}\r`])
      })
    )
  )

  it.effect("clears the progress line before a refusal is printed", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const written: Array<string> = []
        const terminal: Progress.Terminal = { isTTY: true, write: (text) => Effect.sync(() => void written.push(text)) }
        const path = writeFixture(dir, "broken.json", '{"users": [{"id": "u"}], "files": 5}')
        const run = yield* cli("import", path).pipe(Effect.provideService(Progress.ProgressTerminal, terminal))
        expectReported(run)
        expect(run.stderr[1]).toBe("$.files: must be an array of files")
        expect(written.at(-1)).toMatch(/^\r +\r$/)
      })
    )
  )

  it("formats the progress line", () => {
    expect(Progress.line(3 * 1024 * 1024, 200 * 1024 * 1024, 1234567)).toBe(
      "importing: 3.0 of 200.0 MiB read (1%), 1,234,567 submissions"
    )
    expect(Progress.line(0, 0, 0)).toBe("importing: 0.0 of 0.0 MiB read (100%), 0 submissions")
    expect(Progress.line(3 * 1024 * 1024, undefined, 12)).toBe("importing: 3.0 MiB read, 12 submissions")
  })

  it.live(
    "as a real process with stderr not a terminal, prints no progress and the same lines as before",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const dir = yield* tempDir
          const path = writeFixture(dir, "fixture.json", validFixture)
          const result = yield* Effect.promise(() =>
            runProcess(["scripts/run.mjs", "cli", "import", path], {
              DATABASE_URL: `file:${join(dir, "filedata.db")}`,
              LOG_LEVEL: "warn"
            })
          )
          expect(result).toEqual({
            code: 0,
            stdout: "imported 2 users, 3 API keys, 2 files, 2 submissions\n",
            stderr: ""
          })
        })
      ),
    { timeout: 120_000 }
  )

  it.effect("refuses a missing file", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const run = yield* cli("import", join(dir, "nope.json"))
        expectReported(run)
        expect(run.stderr).toEqual([`cannot read ${join(dir, "nope.json")}: no such file`])
        const directory = yield* cli("import", dir)
        expectReported(directory)
        expect(directory.stderr).toEqual([`cannot read ${dir}: it is a directory`])
      })
    )
  )
})

describe("append", () => {
  const at = (day: number) => `2024-03-${String(day).padStart(2, "0")}T12:00:00.000Z`
  const counters = (id: string) =>
    Effect.map(
      findFile("user-1-key-a", id),
      Option.map((file) => [file.SubmissionCounter, file.VisitCounter])
    )
  const emails = (id: string) =>
    Effect.map(submissions(id), (rows) => rows.map((row) => JSON.parse(row.contentJson).email as string))

  it.effect("adds submissions to files that exist, grows SubmissionCounter and replaces a VisitCounter given", () =>
    withDatabase(
      (dir) =>
        Effect.gen(function* () {
          expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
          writeFixture(dir, "more.json", {
            files: [
              {
                id: "file-1",
                submissions: [
                  { createdDate: at(2), content: { email: "c@example.com" } },
                  { createdDate: "2024-01-02T10:30:00.000+01:00", content: { email: "tie@example.com" } }
                ],
                VisitCounter: 12
              },
              { submissions: [{ createdDate: at(1), content: { email: "d@example.com" } }], id: "file-2" }
            ]
          })
          const run = yield* cli("append", "more.json")
          expectSuccess(run)
          expect(run.stdout).toEqual(["appended 3 submissions to 2 files"])
          expect(yield* counters("file-1")).toEqual(Option.some([9, 12]))
          expect(yield* counters("file-2")).toEqual(Option.some([1, 0]))
          // Ascending by createdDate; the appended tie comes after the imported submission at the same instant.
          expect(yield* emails("file-1")).toEqual([
            "a@example.com",
            "tie@example.com",
            "b@example.com",
            "c@example.com"
          ])
          expect(yield* emails("file-2")).toEqual(["d@example.com"])
          const again = yield* cli(
            "append",
            writeFixture(dir, "one.json", {
              files: [{ id: "file-2", submissions: [{ createdDate: at(1), content: { email: "e@example.com" } }] }]
            })
          )
          expect(again.stdout).toEqual(["appended 1 submission to 1 file"])
          expect(yield* emails("file-2")).toEqual(["d@example.com", "e@example.com"])
        }),
      (dir) => ({ INIT_CWD: dir })
    )
  )

  it.effect("writes nothing when a file id is unknown or an entry is wrong, naming each by JSON path", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
        const unknown = yield* cli(
          "append",
          writeFixture(dir, "unknown.json", {
            files: [
              {
                id: "file-1",
                submissions: [{ createdDate: at(1), content: { email: "x@example.com" } }],
                VisitCounter: 1
              },
              { id: "file-9", submissions: [{ createdDate: at(1), content: { email: "y@example.com" } }] }
            ]
          })
        )
        expectReported(unknown)
        expect(unknown.stdout).toEqual([])
        expect(unknown.stderr[0]).toMatch(/nothing was written \(1 problem\)/)
        expect(unknown.stderr.slice(1)).toEqual(["$.files[1].id: no file has this id"])
        const wrong = yield* cli(
          "append",
          writeFixture(dir, "wrong.json", {
            files: [
              { id: "file-1", submissions: [{ createdDate: at(1), content: { email: "x@example.com" } }] },
              { id: "file-2", VisitCounter: -1, userId: "user-2", submissions: [{ createdDate: "soon", content: {} }] },
              { id: "file-9", VisitCounter: 3 }
            ]
          })
        )
        expectReported(wrong)
        // Wrong shapes and unknown ids in one run, by entry; within one, in the order the stream meets them: a
        // file's submissions before the rest of its object.
        expect(wrong.stderr.slice(1)).toEqual([
          "$.files[1].submissions[0].createdDate: must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z",
          "$.files[1].userId: is not allowed",
          "$.files[1].VisitCounter: must be a non-negative integer",
          "$.files[2].id: no file has this id"
        ])
        expect(yield* counters("file-1")).toEqual(Option.some([7, 10]))
        expect(yield* emails("file-1")).toEqual(["a@example.com", "b@example.com"])
        const path = writeFixture(dir, "malformed.json", '{"files": [{"id": "file-1",}]}')
        const malformed = yield* cli("append", path)
        expectReported(malformed)
        expect(malformed.stderr).toEqual([
          `${path} is not valid JSON: unexpected "}", expected a string key at line 1, column 28`
        ])
        const missing = yield* cli("append", join(dir, "nope.json"))
        expect(missing.stderr).toEqual([`cannot read ${join(dir, "nope.json")}: no such file`])
      })
    )
  )

  it.effect("holds ids and content to the text rules as an import does, naming each by JSON path", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        const longest = "😀".repeat(256)
        expectSuccess(
          yield* cli(
            "import",
            writeFixture(dir, "fixture.json", {
              ...validFixture,
              files: [...validFixture.files, { id: longest, userId: "user-1", name: "n", creationDate: at(1) }]
            })
          )
        )
        const broken = yield* cli(
          "append",
          writeFixture(dir, "broken.json", {
            files: [
              { id: "file-1", VisitCounter: 1, submissions: [{ createdDate: at(1), content: { email: "x\u0000" } }] },
              { id: "f".repeat(257) },
              { id: "file-2\ud800", VisitCounter: 1 },
              { id: longest, submissions: [{ createdDate: at(1), content: { email: "\udc00" } }] }
            ]
          })
        )
        expectReported(broken)
        expect(broken.stderr.slice(1)).toEqual([
          "$.files[0].submissions[0].content.email: must not contain the character U+0000",
          "$.files[1].id: must be at most 256 characters",
          "$.files[2].id: must be well-formed Unicode (no lone surrogate)",
          "$.files[3].submissions[0].content.email: must be well-formed Unicode (no lone surrogate)"
        ])
        expect(yield* counters("file-1")).toEqual(Option.some([7, 10]))
        expect(yield* counters(longest)).toEqual(Option.some([0, 0]))
        const appended = yield* cli(
          "append",
          writeFixture(dir, "longest.json", {
            files: [{ id: longest, submissions: [{ createdDate: at(2), content: { email: "😀 e\u0301" } }] }]
          })
        )
        expect(appended.stdout).toEqual(["appended 1 submission to 1 file"])
        expect(yield* emails(longest)).toEqual(["😀 e\u0301"])
      })
    )
  )

  it.effect("shows its progress on a terminal as appending", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
        const written: Array<string> = []
        const terminal: Progress.Terminal = { isTTY: true, write: (text) => Effect.sync(() => void written.push(text)) }
        const path = writeFixture(dir, "more.json", { files: [{ id: "file-2", VisitCounter: 5 }] })
        const run = yield* cli("append", path).pipe(Effect.provideService(Progress.ProgressTerminal, terminal))
        expectSuccess(run)
        expect(run.stdout).toEqual(["appended 0 submissions to 1 file"])
        const shown = Progress.line(1, 1, 0, "appending")
        expect(written).toEqual([`\r${shown}`, `\r${" ".repeat(shown.length)}\r`])
        expect(yield* counters("file-2")).toEqual(Option.some([0, 5]))
      })
    )
  )

  it.live("as main runs it, appends to what another connection imported and prints one line", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
        const path = writeFixture(dir, "more.json", {
          files: [{ id: "file-2", submissions: [{ createdDate: at(1), content: { email: "p@example.com" } }] }]
        })
        const result = yield* Effect.promise(() =>
          runInProcess(["append", path], { DATABASE_URL: `file:${join(dir, "filedata.db")}`, LOG_LEVEL: "warn" })
        )
        expect(result).toEqual({ code: 0, stdout: "appended 1 submission to 1 file\n", stderr: "" })
        expect(yield* counters("file-2")).toEqual(Option.some([1, 0]))
        expect(yield* emails("file-2")).toEqual(["p@example.com"])
      })
    )
  )
})

describe("webhook", () => {
  it.effect("list shows webhooks without their URL's query; disable stops one and names an unknown id", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
        const none = yield* cli("webhook", "list")
        expectSuccess(none)
        expect(none.stdout).toEqual(["no webhooks"])
        const store = yield* WebhookStore.WebhookStore
        const webhook = yield* store.create({
          fileId: FileData.FileId.make("file-1"),
          url: "https://hooks.example.com/in?token=receiver-token",
          sealSecret: () => Effect.succeed("sealed")
        })
        const listed = yield* cli("webhook", "list", "--file", "file-1")
        expectSuccess(listed)
        expect(listed.stdout[1]).toMatch(
          new RegExp(`^${webhook.id}\\s+file-1\\s+enabled\\s+.*https://hooks\\.example\\.com/in\\?…$`)
        )
        expect(listed.stdout.join("\n")).not.toContain("receiver-token")
        expect((yield* cli("webhook", "list", "--file", "file-2")).stdout).toEqual(["no webhooks"])
        const disabled = yield* cli("webhook", "disable", webhook.id)
        expectSuccess(disabled)
        expect(disabled.stdout).toEqual([`disabled webhook ${webhook.id} of file file-1`])
        const found = yield* store.find(webhook.id)
        expect(Option.map(found, (w) => [w.enabled, Option.getOrNull(w.disabledReason)])).toEqual(
          Option.some([false, "operator"])
        )
        expect((yield* cli("webhook", "list")).stdout[1]).toMatch(/disabled \(operator\)/)
        const unknown = yield* cli("webhook", "disable", "wh_nobody")
        expectReported(unknown)
        expect(unknown.stderr).toEqual(['no webhook has the id "wh_nobody"'])
      })
    )
  )
})

describe("key", () => {
  it.effect("create prints a fresh fdk_ key once, and it authenticates", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
        const run = yield* cli("key", "create", "--user", "user-2")
        expectSuccess(run)
        const key = printedKey(run)
        expect(key.startsWith("fdk_")).toBe(true)
        expect(key).toHaveLength(ApiKeyGenerator.KEY_LENGTH)
        expect(key).toHaveLength(47)
        expect(run.stdout.filter((line) => line.includes(key))).toHaveLength(1)
        expect(run.stdout.join("\n")).toMatch(/cannot be shown again/)
        expect(yield* keyOwner(key)).toEqual(Option.some("user-2"))
        const second = printedKey(yield* cli("key", "create", "--user", "user-2"))
        expect(second).not.toBe(key)
      })
    )
  )

  it.effect("create refuses an unknown user", () =>
    withDatabase(() =>
      Effect.gen(function* () {
        const run = yield* cli("key", "create", "--user", "nobody")
        expectReported(run)
        expect(run.stderr).toEqual(['No user has the id "nobody"'])
        expect(yield* allKeys).toEqual([])
      })
    )
  )

  it.effect("create without --user is a usage error, not a crash", () =>
    withDatabase(() =>
      Effect.gen(function* () {
        const run = yield* cli("key", "create")
        expectReported(run, 2)
        expect(run.stderr.join("\n")).toMatch(/user/)
      })
    )
  )

  it.effect("revoke makes the key stop authenticating", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
        const created = yield* cli("key", "create", "--user", "user-1")
        const key = printedKey(created)
        const id = /^created API key (\S+) for user user-1$/.exec(created.stdout[0] ?? "")?.[1] ?? ""
        expect(id).not.toBe("")
        expect(yield* keyOwner(key)).toEqual(Option.some("user-1"))

        const run = yield* cli("key", "revoke", id)
        expectSuccess(run)
        expect(run.stdout[0]).toMatch(new RegExp(`^revoked API key ${id} of user user-1 \\(at \\d{4}-`))
        expect(yield* keyOwner(key)).toEqual(Option.none())
        expect(yield* keyOwner("user-1-key-a")).toEqual(Option.some("user-1"))
        const revoked = (yield* allKeys).find((info) => info.id === id)
        expect(Option.isSome(revoked?.revokedAt ?? Option.none())).toBe(true)
      })
    )
  )

  it.effect("revoke refuses an unknown id", () =>
    withDatabase(() =>
      Effect.gen(function* () {
        const run = yield* cli("key", "revoke", "999")
        expectReported(run)
        expect(run.stderr).toEqual(['No API key has the id "999"'])
      })
    )
  )

  it.effect("list shows ids, users and dates, never a key", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expect((yield* cli("key", "list")).stdout).toEqual(["no API keys"])
        expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
        const keys = yield* allKeys
        const firstId = keys[0]?.id ?? ""
        expectSuccess(yield* cli("key", "revoke", firstId))

        const created = yield* cli("key", "create", "--user", "user-2")
        const generated = printedKey(created)

        const run = yield* cli("key", "list")
        expectSuccess(run)
        expect(run.stdout).toHaveLength(5)
        expect(run.stdout[0]?.split(/\s+/)).toEqual(["ID", "PREFIX", "USER", "CREATED", "REVOKED"])
        const rows = run.stdout.slice(1).map((line) => line.split(/\s+/))
        expect(rows.map((row) => row[0])).toEqual([...keys.map((key) => key.id), expect.any(String)])
        // Fixture keys shorter than 32 characters have no prefix; a generated key shows fdk_ and 4 characters.
        expect(rows.map((row) => row[1])).toEqual(["-", "-", "-", generated.slice(0, 8)])
        expect(rows.map((row) => row[2])).toEqual(["user-1", "user-1", "user-2", "user-2"])
        expect(rows.every((row) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(row[3] ?? ""))).toBe(true)
        expect(rows[0]?.[4]).toMatch(/^\d{4}-/)
        expect(rows[1]?.[4]).toBe("-")
        expect(run.stdout.join("\n")).not.toMatch(/key-a|key-b|user-2-key/)
        expect(run.stdout.join("\n")).not.toContain(generated.slice(0, 9))

        const filtered = yield* cli("key", "list", "--user", "user-2")
        expectSuccess(filtered)
        expect(filtered.stdout.slice(1).map((line) => line.split(/\s+/)[2])).toEqual(["user-2", "user-2"])

        const unknown = yield* cli("key", "list", "--user", "nobody")
        expectReported(unknown)
        expect(unknown.stderr).toEqual(['No user has the id "nobody"'])
      })
    )
  )
})

describe("key find", () => {
  const reading = (text: string | undefined, isTTY = false) =>
    Effect.provideService(Stdin.StandardInput, {
      isTTY,
      readLine: Effect.succeed(Option.fromNullable(text))
    })

  it.effect("prints the id, prefix, owner and state of the key read from stdin", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
        const created = yield* cli("key", "create", "--user", "user-2")
        const key = printedKey(created)
        const id = /^created API key (\S+) /.exec(created.stdout[0] ?? "")?.[1]
        const run = yield* cli("key", "find").pipe(reading(key))
        expectSuccess(run)
        expect(run.stdout[0]?.split(/\s+/)).toEqual(["ID", "PREFIX", "USER", "CREATED", "REVOKED"])
        expect(run.stdout[1]?.split(/\s+/).slice(0, 3)).toEqual([id, key.slice(0, 8), "user-2"])
        expect(run.stdout.join("\n")).not.toContain(key)

        // A short fixture key has no prefix, but is found all the same.
        const short = yield* cli("key", "find").pipe(reading("user-1-key-b"))
        expect(short.stdout[1]?.split(/\s+/).slice(1, 3)).toEqual(["-", "user-1"])

        const unknown = yield* cli("key", "find").pipe(reading("not-a-key"))
        expectReported(unknown)
        expect(unknown.stderr).toEqual(["no API key matches the key read from stdin"])
        // No key holds U+0000 (the text rules), so such a line is told like any unknown key, not a failure.
        const nul = yield* cli("key", "find").pipe(reading(`${key}\u0000`))
        expectReported(nul)
        expect(nul.stderr).toEqual(["no API key matches the key read from stdin"])
        const nothing = yield* cli("key", "find").pipe(reading(undefined))
        expectReported(nothing, 2)
        expect(nothing.stderr[0]).toMatch(/reads the API key from stdin/)
        const prompted = yield* cli("key", "find").pipe(reading(key, true))
        expect(prompted.stderr).toEqual(["Paste the API key and press Enter:"])
      })
    )
  )
})

describe("user", () => {
  it.effect("create makes a user keys can be given to; list shows ids, active keys and files", () =>
    withDatabase((dir) =>
      Effect.gen(function* () {
        expect((yield* cli("user", "list")).stdout).toEqual(["no users"])
        const created = yield* cli("user", "create", "carol")
        expectSuccess(created)
        expect(created.stdout[0]).toMatch(/^created user carol/)
        expect(yield* userExists("carol")).toBe(true)
        expectSuccess(yield* cli("key", "create", "--user", "carol"))
        expectSuccess(yield* cli("import", writeFixture(dir, "fixture.json", validFixture)))
        const revoked = (yield* allKeys).find((key) => key.userId === "user-1")
        expectSuccess(yield* cli("key", "revoke", revoked?.id ?? ""))

        const list = yield* cli("user", "list")
        expectSuccess(list)
        expect(list.stdout.map((line) => line.split(/\s+/))).toEqual([
          ["ID", "KEYS", "FILES"],
          ["carol", "1", "0"],
          ["user-1", "1", "1"],
          ["user-2", "1", "1"]
        ])

        const again = yield* cli("user", "create", "carol")
        expectReported(again)
        expect(again.stderr).toEqual(['A user with the id "carol" already exists'])
        const clash = yield* cli("import", writeFixture(dir, "clash.json", { users: [{ id: "carol" }] }))
        expect(clash.stderr.slice(1)).toEqual(["$.users[0].id: already exists"])
      })
    )
  )

  it.effect("create holds the id to the text rules: 256 characters, astral ones too, and no more", () =>
    withDatabase(() =>
      Effect.gen(function* () {
        const longest = "😀".repeat(256)
        expectSuccess(yield* cli("user", "create", longest))
        expect(yield* userExists(longest)).toBe(true)
        for (const [id, detail] of [
          ["u".repeat(257), "must be at most 256 characters"],
          ["u\u0000", "must not contain the character U+0000"],
          ["u\ud800", "must be well-formed Unicode (no lone surrogate)"]
        ] as const) {
          const run = yield* cli("user", "create", id)
          expectReported(run, 2)
          expect(run.stderr.join("\n")).toContain(detail)
        }
        expect((yield* cli("user", "list")).stdout.slice(1).map((line) => line.split(/\s+/)[0])).toEqual([longest])
      })
    )
  )

  it.effect("create refuses an empty id and a missing one as usage errors", () =>
    withDatabase(() =>
      Effect.gen(function* () {
        expectReported(yield* cli("user", "create", ""), 2)
        expectReported(yield* cli("user", "create"), 2)
        expect((yield* cli("user", "list")).stdout).toEqual(["no users"])
      })
    )
  )
})

describe("command line", () => {
  it.effect("takes --log-level with LOG_LEVEL's names anywhere, and refuses Effect's", () =>
    withDatabase(() =>
      Effect.gen(function* () {
        for (const args of [
          ["--log-level", "warn", "user", "list"],
          ["user", "list", "--log-level=none"],
          ["user", "--log-level", "debug", "list"]
        ]) {
          expectSuccess(yield* cli(...args))
        }
        for (const name of ["warning", "trace", "fatal", "all", "WARN", ""]) {
          const run = yield* cli("--log-level", name, "user", "list")
          expectReported(run, 2)
          expect(run.stderr).toEqual([
            `--log-level: expected one of debug, info, warn, error, none but received ${JSON.stringify(name)}`
          ])
        }
        expectReported(yield* cli("user", "list", "--log-level"), 2)
      })
    )
  )

  it.effect("sets the least log level of the command's log lines", () =>
    Effect.gen(function* () {
      const logged: Array<string> = []
      const logger = Logger.make(({ logLevel }) => void logged.push(logLevel.label))
      const tree = Commands.command.pipe(
        Command.provide(Layer.effectDiscard(Effect.zipRight(Effect.logInfo("info"), Effect.logWarning("warn"))))
      )
      const quiet = yield* cliWith(tree)("--log-level", "warn", "user", "list").pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
      expect(quiet.stderr).toEqual([])
      expect(logged).toEqual(["WARN"])
    }).pipe(
      Effect.provide(Layer.merge(NodeContext.layer, sqlite(":memory:"))),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
    )
  )

  it.effect("exits 2 for unknown commands and options and invalid values, 1 for failed commands", () =>
    withDatabase(() =>
      Effect.gen(function* () {
        for (const args of [
          ["bogus"],
          ["key", "list", "--bogus"],
          ["import"],
          ["import", "a", "b"],
          ["key", "list", "--user"]
        ]) {
          expectReported(yield* cli(...args), 2)
        }
        expectReported(yield* cli("key", "revoke", "42"), 1)
        expectSuccess(yield* cli("user", "list"))
        // A careless value is refused with the option's or argument's name and the rule, not a schema's tree.
        const named = [
          [
            ["export", "--file", "x", "--format", "csv", "--since", "2024-03-07"],
            "--since: must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z"
          ],
          [["key", "list", "--user", ""], "--user: must be a non-empty string"],
          [["user", "create", ""], "ID: must be a non-empty string"]
        ] as const
        for (const [args, line] of named) {
          const run = yield* cli(...args)
          expectReported(run, 2)
          expect(run.stderr.join("\n").split("\n")[0], args.join(" ")).toBe(line)
        }
      })
    )
  )
})

describe("demo", () => {
  it.effect("creates the demo data once and a new working key on every run", () =>
    withDatabase(
      () =>
        Effect.gen(function* () {
          const first = yield* cli("demo")
          expectSuccess(first)
          const key = printedKey(first)
          expect(ApiKeyGenerator.isGenerated(key)).toBe(true)
          expect(first.stdout).toContainEqual(
            `curl -sS -X POST http://127.0.0.1:8080/api/v1/file-data -H 'Content-Type: application/json' -d '{"fileId":"demo-contact-form","apiKey":"${key}"}'`
          )
          // The examples' variables, and what a server on every interface exposes.
          expect(first.stdout).toContainEqual("export FILEDATA_URL=http://127.0.0.1:8080")
          expect(first.stdout).toContainEqual(`export FILEDATA_API_KEY=${key}`)
          expect(first.stdout.at(-1)).toBe(
            "Note: HOST=0.0.0.0 serves on every interface, so anyone who reaches this machine can read the demo's " +
              "files with this key. For a trial on a shared machine: HOST=127.0.0.1 pnpm start"
          )
          expect(yield* keyOwner(key)).toEqual(Option.some("demo-user"))
          expect(Option.map(yield* findFile(key, "demo-contact-form"), (file) => file.ownerId)).toEqual(
            Option.some("demo-user")
          )
          const contact = yield* submissions("demo-contact-form")
          expect(contact.length).toBeGreaterThanOrEqual(3)
          expect(Object.keys(JSON.parse(contact[0]?.contentJson ?? "{}"))).toEqual(["name", "email", "message"])
          expect(Option.isSome(yield* findFile(key, "demo-feedback-survey"))).toBe(true)
          expect(yield* submissions("demo-feedback-survey")).toEqual([])

          const second = yield* cli("demo")
          expectSuccess(second)
          const another = printedKey(second)
          expect(another).not.toBe(key)
          expect(second.stdout.join("\n")).toMatch(/already exists/)
          expect(yield* keyOwner(another)).toEqual(Option.some("demo-user"))
          expect(yield* keyOwner(key)).toEqual(Option.some("demo-user"))
          expect((yield* allKeys).filter((info) => info.userId === "demo-user")).toHaveLength(2)
          expect((yield* submissions("demo-contact-form")).length).toBe(contact.length)
        }),
      { PORT: "8080", HOST: "0.0.0.0" }
    )
  )

  it.effect("--reset puts the demo's files back as they were: what was appended and registered is gone", () =>
    withDatabase(
      (dir) =>
        Effect.gen(function* () {
          expectSuccess(yield* cli("demo"))
          const initial = yield* submissions("demo-contact-form")
          const extra = { createdDate: "2024-03-19T10:00:00.000Z", content: { email: "b@example.com" } }
          const document = { files: [{ id: "demo-contact-form", submissions: [extra], VisitCounter: 420 }] }
          expectSuccess(yield* cli("append", writeFixture(dir, "append.json", document)))
          yield* Effect.flatMap(WebhookStore.WebhookStore, (store) =>
            store.create({
              fileId: FileData.FileId.make("demo-contact-form"),
              url: "https://example.com/hooks",
              sealSecret: () => Effect.succeed("sealed")
            })
          )
          const old = printedKey(yield* cli("demo"))

          const reset = yield* cli("demo", "--reset")
          expectSuccess(reset)
          expect(reset.stdout[0]).toBe(
            "removed user demo-user with 2 API keys, 4 files, 2508 submissions and 1 webhook"
          )
          expect(reset.stdout[1]).toMatch(/^created user demo-user with 4 files: /)
          const key = printedKey(reset)
          expect(yield* keyOwner(old)).toEqual(Option.none())
          expect(yield* keyOwner(key)).toEqual(Option.some("demo-user"))
          expect(yield* submissions("demo-contact-form")).toHaveLength(initial.length)
          expect(Option.map(yield* findFile(key, "demo-contact-form"), (file) => file.VisitCounter)).toEqual(
            Option.some(412)
          )
          expect(yield* Effect.flatMap(WebhookStore.WebhookStore, (store) => store.listAll(Option.none()))).toEqual([])
          // On a database without the demo, --reset only creates it.
          const fresh = yield* withDatabase(() => cli("demo", "--reset"))
          expectSuccess(fresh)
          expect(fresh.stdout[0]).toMatch(/^created user demo-user/)
        }),
      { PORT: "8080", HOST: "127.0.0.1" }
    )
  )

  it.effect("shows a bracketed IPv6 host and reports invalid configuration in one line", () =>
    Effect.gen(function* () {
      const ipv6 = yield* withDatabase(() => cli("demo"), { PORT: "3001", HOST: "::1" })
      expectSuccess(ipv6)
      expect(ipv6.stdout.join("\n")).toMatch(/http:\/\/\[::1\]:3001\/api\/v1\/file-data/)
      expect(ipv6.stdout).toContainEqual("export FILEDATA_URL=http://[::1]:3001")
      // One interface of its own: nothing to warn of.
      expect(ipv6.stdout.join("\n")).not.toContain("every interface")
      const picked = yield* withDatabase(() => cli("demo"), { PORT: "0", HOST: "::" })
      expect(picked.stdout).toContainEqual("export FILEDATA_URL=http://127.0.0.1:PORT")
      expect(picked.stdout.join("\n")).toContain("HOST=:: serves on every interface")

      const invalid = yield* withDatabase(() => cli("demo"), { PORT: "eighty" })
      expectReported(invalid)
      expect(invalid.stderr).toEqual([
        'Invalid configuration: PORT: Expected a whole number from 0 to 65535 but received "eighty"'
      ])
    })
  )
})

describe("storage", () => {
  it.effect("an unusable database is one line, with storage provided the way main provides it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const dir = yield* tempDir
        // A directory cannot be opened as a database file.
        const run = yield* cliWith(Commands.command.pipe(Command.provide(sqlite(dir))))("key", "list")
        expectReported(run)
        expect(run.stderr).toHaveLength(1)
        expect(run.stderr[0]).toMatch(/^Cannot start: the database at DATABASE_URL=file:\S+ is not available: \S/)
        expect(run.stderr[0]).toContain(dir)
      })
    ).pipe(Effect.provide(NodeContext.layer), Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
  )

  it.effect("--help needs no database", () =>
    Effect.gen(function* () {
      const run = yield* cliWith(Commands.command.pipe(Command.provide(Layer.die("storage opened"))))("--help")
      expectSuccess(run)
      expect(run.stdout.join("\n")).toMatch(/import/)
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("CliError", () => {
  it.effect("prints a failure once even when reported twice, and names the storage cause", () =>
    Effect.gen(function* () {
      const stderr: Array<string> = []
      const base = yield* Effect.console
      const console = {
        ...base,
        error: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void stderr.push(args.join(" ")))
      }
      const failing = Effect.fail(
        new FileDataError.StorageUnavailable({
          cause: new Error("SqlError: open failed", { cause: new Error("disk I/O error") })
        })
      )
      const exit = yield* failing.pipe(CliError.report, CliError.report, Effect.withConsole(console), Effect.exit)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(stderr).toEqual(["storage is not available: SqlError: open failed: disk I/O error"])
    })
  )

  it("turns a defect into one line", () => {
    expect(CliError.lines(Cause.die(new TypeError("boom")))).toEqual(["unexpected error: boom"])
  })
})

describe("configuration", () => {
  it.effect("the README lists as CLI only exactly the variables the CLI reads besides ServiceConfig's", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const service = notingProvider({})
        yield* Effect.withConfigProvider(ServiceConfig.config, service.provider)
        const cliOwn = notingProvider({})
        const dir = yield* tempDir
        yield* Effect.withConfigProvider(Color.noColor, cliOwn.provider)
        yield* cli("import", "fixture.json").pipe(
          Effect.provide(sqlite(join(dir, "filedata.db"))),
          Effect.withConfigProvider(cliOwn.provider)
        )
        const own = [...cliOwn.asked].filter((name) => !service.asked.has(name))
        const documented = readmeRows().filter((row) => row.cliOnly)
        expect(documented.map((row) => row.variable).sort()).toEqual(own.sort())
      })
    ).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("Color", () => {
  it("removes escape sequences only from the streams where colour is not allowed", () => {
    expect(Color.strip("\u001b[0;1m\u001b[0;37;1mfiledata\u001b[0m \u001b]8;;http://x\u0007link\u001b]8;;\u0007")).toBe(
      "filedata link"
    )
    expect(Color.streams({ stdout: true, stderr: false }, false)).toEqual({ stdout: true, stderr: false })
    expect(Color.streams({ stdout: true, stderr: true }, true)).toEqual({ stdout: false, stderr: false })
    const written: Array<string> = []
    const base = {
      unsafe: {
        log: (text: string) => void written.push(`out ${text}`),
        error: (text: string) => void written.push(`err ${text}`)
      }
    } as unknown as Console.Console
    const console = Color.console(base, { stdout: true, stderr: false })
    console.unsafe.log("\u001b[1mbold\u001b[0m")
    console.unsafe.error("\u001b[1mbold\u001b[0m")
    expect(written).toEqual(["out \u001b[1mbold\u001b[0m", "err bold"])
  })
})

describe("Commands.takeLogLevel", () => {
  it("leaves what follows -- alone", () => {
    expect(Commands.takeLogLevel(["import", "--", "--log-level"])).toEqual(
      Either.right({ args: ["import", "--", "--log-level"], level: Option.none() })
    )
  })
})

describe("ApiKeyGenerator", () => {
  it.effect("generates distinct 256-bit keys with the fdk_ prefix", () =>
    Effect.gen(function* () {
      const keys = (yield* Effect.replicateEffect(ApiKeyGenerator.generate, 100)).map(Redacted.value)
      expect(new Set(keys).size).toBe(100)
      expect(keys.every(ApiKeyGenerator.isGenerated)).toBe(true)
      expect(keys.every((key) => Buffer.from(key.slice(4), "base64url").length === 32)).toBe(true)
    })
  )
})
