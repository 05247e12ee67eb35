// The docs' examples as a reader runs them: every `sh runnable` and `ts runnable` block of README.md and
// docs/*.md, after the built CLI's `demo`, against the server over HTTP, here in the test's process
// (docs/architecture.md#examples-that-run).

import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Processes } from "@filedata/testing"
import * as InProcess from "./utils/InProcess.js"

const { finish, root, startBuilt } = Processes
const { serve, stop } = InProcess

interface Block {
  readonly where: string
  readonly language: "sh" | "ts"
  readonly text: string
}

const blocks: ReadonlyArray<Block> = ["README.md", ...readdirSync(join(root, "docs")).map((name) => `docs/${name}`)]
  .filter((file) => file.endsWith(".md"))
  .flatMap((file) => {
    const text = readFileSync(join(root, file), "utf8")
    return [...text.matchAll(/^```(sh|ts) runnable\n([\s\S]*?)^```$/gm)].map((match) => ({
      where: `${file}:${text.slice(0, match.index).split("\n").length}`,
      language: match[1] as Block["language"],
      text: match[2] ?? ""
    }))
  })

/** Runs `command` to its end, with what it printed. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) => {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  return finish(child)
}

const runAnew = async (block: Block, base: string, apiKey: string) => {
  const dir = mkdtempSync(join(tmpdir(), "filedata-docs-example-"))
  // `pnpm filedata`, which a reader runs from the repository's root, run from the block's directory.
  const text = block.text.replaceAll("pnpm filedata ", `node ${join(root, "scripts/run.mjs")} cli `)
  // INIT_CWD: where pnpm says the command was typed, which the CLI reads a relative path from.
  const env = { ...database, FILEDATA_URL: base, FILEDATA_API_KEY: apiKey, INIT_CWD: dir }
  if (block.language === "sh") return { dir, ...(await run("sh", ["-c", text], dir, env)) }
  // As docs/webhooks.md tells the reader: saved as a file, run with scripts/example.mjs.
  writeFileSync(join(dir, "example.ts"), text)
  return { dir, ...(await run(process.execPath, [join(root, "scripts/example.mjs"), "example.ts"], dir, env)) }
}

// A block runs once against one server with one key, and every test of that run reads the same run: bundling
// and starting the examples is most of this file's time.
const runs = new Map<string, ReturnType<typeof runAnew>>()
const runBlock = (block: Block, base: string, apiKey: string) => {
  const key = `${block.where} ${base} ${apiKey}`
  const found = runs.get(key)
  if (found !== undefined) return found
  const started = runAnew(block, base, apiKey)
  runs.set(key, started)
  return started
}

let database: Record<string, string> = {}
let apiKey = ""
let served: InProcess.Served | undefined

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "filedata-docs-"))
  database = { DATABASE_URL: `file:${join(dir, "filedata.db")}`, PORT: "0", HOST: "127.0.0.1" }
  const demo = await finish(startBuilt("cli", ["demo"], database))
  expect(demo.code, demo.stderr).toBe(0)
  apiKey = /export FILEDATA_API_KEY=(\S+)/.exec(demo.stdout)?.[1] ?? ""
  expect(apiKey).not.toBe("")
  // docs/webhooks.md's receiver listens on 127.0.0.1, as the page says to allow.
  served = await serve({ ...database, WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" })
}, 60_000)

afterAll(async () => {
  if (served !== undefined) await stop(served, [apiKey])
})

describe("the docs' runnable examples, after `pnpm filedata demo`", () => {
  it("are found in the README and under docs/", () => {
    expect(blocks.map((block) => block.where.split(":")[0])).toEqual(
      expect.arrayContaining(["README.md", "docs/api.md"])
    )
  })

  for (const block of blocks) {
    it(`${block.where} (${block.language}) runs as written`, async () => {
      const exit = await runBlock(block, served?.base ?? "", apiKey)
      expect(exit.code, `${exit.stdout}\n${exit.stderr}`).toBe(0)
    }, 60_000)
  }

  it("the README's survey block shows compression and the 2,500 submissions", async () => {
    const block = blocks.find((found) => found.where.startsWith("README.md") && found.text.includes("survey.json"))
    expect(block).toBeDefined()
    const exit = await runBlock(block as Block, served?.base ?? "", apiKey)
    expect(exit.stdout).toMatch(/^content-encoding: (gzip|br|zstd|deflate)/im)
    expect(exit.stdout.trim().split("\n").at(-1)).toBe("2500")
  }, 60_000)
})

describe("Swagger UI's Try it out, after `pnpm filedata demo`", () => {
  it("fills in a file id of the demo's, which the demo's key reads", async () => {
    const base = served?.base ?? ""
    const document = await (await fetch(`${base}/openapi.json`)).text()
    const fileIds = new Set([...document.matchAll(/"examples":\["(demo-[\w-]+|file-\d+)"\]/g)].map((match) => match[1]))
    expect([...fileIds]).toEqual(["demo-contact-form"])
    const reply = await fetch(`${base}/api/v1/file-data`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ fileId: "demo-contact-form", apiKey })
    })
    expect(reply.status).toBe(200)
  })

  it("shows the demo's reply for that file as the 200's example", async () => {
    const base = served?.base ?? ""
    const document = await (await fetch(`${base}/openapi.json`)).json()
    const example = document.components.schemas.FileData.examples[0]
    const reply = await (
      await fetch(`${base}/api/v1/file-data`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ fileId: "demo-contact-form", apiKey })
      })
    ).json()
    // Other blocks append to this file: the demo's own submissions come first.
    const { submissions, SubmissionCounter: _, ...fields } = example
    expect(reply).toMatchObject(fields)
    expect(reply.submissions.slice(0, submissions.length)).toEqual(submissions)
    expect(submissions.length).toBe(example.SubmissionCounter)
  })

  it("fills getSubmissions' body with fields the demo answers, and shows that answer as the 200's example", async () => {
    const base = served?.base ?? ""
    const document = await (await fetch(`${base}/openapi.json`)).json()
    const { properties } = document.components.schemas.GetSubmissionsRequest
    // Each field as Swagger UI fills it in: its example.
    const body = Object.fromEntries(
      Object.entries(properties as Record<string, { examples?: Array<unknown> }>).map(([name, field]) => [
        name,
        field.examples?.[0]
      ])
    )
    expect(Object.values(body)).not.toContain(undefined)
    const reply = await fetch(`${base}/api/v1/file-data/submissions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...body, apiKey })
    })
    expect(reply.status).toBe(200)
    const page = await reply.json()
    const example = document.components.schemas.SubmissionsPage.examples[0]
    // Other blocks append to this file (outside the window): the demo's own submissions are the page. Ids are
    // drawn when the demo imports the file, so the example's stand for them.
    const withoutIds = ({ submissions, ...rest }: { submissions: Array<{ id: string }> }) => ({
      ...rest,
      submissions: submissions.map(({ id, ...submission }) => {
        expect(id).toMatch(/^sub_[A-Za-z0-9_-]+$/)
        return submission
      })
    })
    expect(withoutIds(page)).toEqual(withoutIds(example))
  })

  it("fills getChanges' body with fields the demo answers: a cursor of the demo's file", async () => {
    const base = served?.base ?? ""
    const document = await (await fetch(`${base}/openapi.json`)).json()
    const { properties } = document.components.schemas.GetChangesRequest
    const body = Object.fromEntries(
      Object.entries(properties as Record<string, { examples?: Array<unknown> }>).map(([name, field]) => [
        name,
        field.examples?.[0]
      ])
    )
    expect(Object.values(body)).not.toContain(undefined)
    const reply = await fetch(`${base}/api/v1/file-data/changes`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...body, apiKey })
    })
    expect(reply.status).toBe(200)
    const page = await reply.json()
    expect(Object.keys(page)).toEqual(["changes", "next", "hasMore"])
    for (const change of page.changes) expect(change.type).toMatch(/^submission\.(created|erased)$/)
  })
})

describe("the export and webhook pages' blocks", () => {
  it("docs/api.md's export gives the CSV header, the 1060 lines of 2 June and the CLI's same bytes", async () => {
    const block = blocks.find((found) => found.text.includes("june-2.ndjson")) as Block
    const exit = await runBlock(block, served?.base ?? "", apiKey)
    expect(exit.code, exit.stderr).toBe(0)
    expect(exit.stdout).toBe("createdDate,name,email,message\r\n1060\nthe same bytes\n")
  }, 60_000)

  it("docs/webhooks.md's catch-up loop brings a mirror back to the file: a backdated append, an erasure", async () => {
    const block = blocks.find(
      (found) => found.where.startsWith("docs/webhooks.md") && found.text.includes("catchUp")
    ) as Block
    const exit = await runBlock(block, served?.base ?? "", apiKey)
    expect(exit.code, exit.stderr).toBe(0)
    expect(exit.stdout).toMatch(
      /^mirrored (\d+) submissions from the feed\nappended 1 submission to 1 file\nevent: submissions.created, cursor = its changesNext\nappended 2 submissions to 1 file\ncaught up: 1 created, 1 erased\nthe mirror is the file: (\d+) submissions, first Late Catch-up\n$/
    )
    const [, before, after] = /^mirrored (\d+)[\s\S]*the mirror is the file: (\d+)/.exec(exit.stdout) ?? []
    expect(Number(after)).toBe(Number(before) + 2)
  }, 60_000)

  it("docs/webhooks.md's receiver verifies a delivery, its redelivery, and catches up with both cursors", async () => {
    const block = blocks.find(
      (found) => found.where.startsWith("docs/webhooks.md") && found.text.includes("redeliver")
    ) as Block
    const exit = await runBlock(block, served?.base ?? "", apiKey)
    expect(exit.code, exit.stderr).toBe(0)
    expect(exit.stdout).toMatch(
      /^appended 1 submission to 1 file\ndelivery (\S+): 1 new, SubmissionCounter \d+\nlog: delivered, status 204, attempt 1\ndelivery \1: 1 new, SubmissionCounter \d+\nredelivered under the same webhook-id\ncaught up: 1 since the last cursor, next = data.next\ncaught up on the feed: 1 change, next = data.changesNext\n$/
    )
  }, 60_000)
})

describe("docs/api.md's TypeScript sync", () => {
  it("reads the survey's three pages and gives the cursor", async () => {
    const block = blocks.find((found) => found.language === "ts" && found.text.includes("syncOnce")) as Block
    const exit = await runBlock(block, served?.base ?? "", apiKey)
    expect(exit.code, exit.stderr).toBe(0)
    expect(exit.stdout).toMatch(/^1000 new\n1000 new\n500 new\nnext run starts after \S+\n$/)
  }, 60_000)

  it("waits Retry-After when refused for the rate limit, then reads the same page again", async () => {
    const block = blocks.find((found) => found.language === "ts" && found.text.includes("syncOnce")) as Block
    // The third page is asked for a few milliseconds after the first: a window of 2 s holds it on a slow
    // machine too, and the wait it causes is the test's subject.
    const limited = await serve({ ...database, RATE_LIMIT_MAX: "2", RATE_LIMIT_WINDOW_MS: "2000" })
    try {
      const exit = await runBlock(block, limited.base, apiKey)
      expect(exit.code, exit.stderr).toBe(0)
      expect(exit.stdout).toMatch(/^1000 new\n1000 new\n500 new\nnext run starts after \S+\n$/)
      expect(exit.stderr).toMatch(/^waiting \d+ s, as Retry-After says\n$/)
    } finally {
      await stop(limited, [apiKey])
    }
  }, 60_000)
})

describe("docs/api.md's sync script", () => {
  const sync = () => blocks.find((block) => block.text.includes("sync-cursor")) as Block

  it("reads the survey in pages, and a second run reads nothing new", async () => {
    const first = await runBlock(sync(), served?.base ?? "", apiKey)
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout.trim()).toBe("2500")
    const again = await run("sh", ["-c", sync().text], first.dir, {
      FILEDATA_URL: served?.base ?? "",
      FILEDATA_API_KEY: apiKey
    })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout.trim()).toBe("2500")
  }, 60_000)

  it("prints a refusal's problem document and waits Retry-After before trying again", async () => {
    // The third page is asked for a few milliseconds after the first: a window of 2 s holds it on a slow
    // machine too, and the wait it causes is the test's subject.
    const limited = await serve({ ...database, RATE_LIMIT_MAX: "2", RATE_LIMIT_WINDOW_MS: "2000" })
    try {
      const exit = await runBlock(sync(), limited.base, apiKey)
      expect(exit.code, exit.stderr).toBe(0)
      expect(exit.stdout.trim()).toBe("2500")
      expect(exit.stderr).toContain('"code":"rate_limited"')
      expect(exit.stderr).toMatch(/waiting \d+ s, as Retry-After says/)
    } finally {
      await stop(limited, [apiKey])
    }
  }, 60_000)

  it("prints the problem document and exits 1 on a refusal that has no Retry-After", async () => {
    const exit = await runBlock(sync(), served?.base ?? "", "not-a-key-of-anyone")
    expect(exit.code).toBe(1)
    expect(exit.stderr).toContain('"code":"access_denied"')
  }, 60_000)
})

describe("docs/embedding.md's client example", () => {
  const example = () =>
    blocks.find(
      (block) => block.where.startsWith("docs/embedding.md") && block.text.includes("FileDataClient")
    ) as Block

  it("reads the demo's contact form with the demo's key", async () => {
    const exit = await runBlock(example(), served?.base ?? "", apiKey)
    expect(exit.code, exit.stderr).toBe(0)
    // 4 on a fresh demo; the append and webhook blocks before it add to the same file.
    expect(exit.stdout).toMatch(/^Contact form: \d+ submissions\n$/)
  }, 60_000)

  it("names the refusal for a key that is not the owner's", async () => {
    const exit = await runBlock(example(), served?.base ?? "", "not-a-key-of-anyone")
    expect(exit.code, exit.stderr).toBe(0)
    expect(exit.stdout).toBe("refused: access_denied\n")
  }, 60_000)
})

describe("docs/embedding.md's other operations", () => {
  const example = (marker: string) =>
    blocks.find((block) => block.where.startsWith("docs/embedding.md") && block.text.includes(marker)) as Block

  it("in process: a page, the CSV header, and the problem filedata sends for an unreadable body", async () => {
    const exit = await runBlock(example("ProblemDocument.fromFailure"), served?.base ?? "", apiKey)
    expect(exit.code, exit.stderr).toBe(0)
    const [page, header, problem, ...rest] = exit.stdout.split("\n")
    expect([page, header, rest]).toEqual(["1 submission(s), hasMore false", "createdDate,email", [""]])
    expect(problem?.slice(0, 4)).toBe("422 ")
    expect(JSON.parse(problem?.slice(4) ?? "")).toEqual({
      type: "urn:filedata:problem:validation_failed",
      title: "Validation failed",
      status: 422,
      detail: "body: must be valid JSON",
      code: "validation_failed",
      errors: [{ pointer: "", detail: "must be valid JSON" }]
    })
  }, 60_000)

  it("through the client: pages, the export's header, the webhooks, and limit 0 refused as the server does", async () => {
    const exit = await runBlock(example("listWebhooks"), served?.base ?? "", apiKey)
    expect(exit.code, exit.stderr).toBe(0)
    const [pages, header, webhooks, ...refused] = exit.stdout.trim().split("\n")
    expect(pages).toMatch(/^2 \+ \d+, hasMore false$/)
    expect(header?.startsWith("createdDate,")).toBe(true)
    expect(webhooks).toMatch(/^\d+ webhook\(s\)$/)
    expect(refused.join("\n")).toMatch(/pointer: '\/limit', detail: 'must be an integer from 1 to 10000'/)
  }, 60_000)
})
