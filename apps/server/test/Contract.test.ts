// The contract's commands as an outside harness drives them: the launcher behind `pnpm filedata` and
// `pnpm start`, real processes, real files, real signals.

import { afterEach, describe, expect, it } from "@effect/vitest"
import { Fixtures, Processes, TempDirectory } from "@filedata/testing"

const { finish, killLeftovers, listening, post, start } = Processes

const good = Fixtures.contractExample

const badInLastEntry = {
  users: [{ id: "user-2", apiKeys: ["second-key"] }],
  files: [
    { id: "file-2", userId: "user-2", name: "Fine", creationDate: "2024-01-01T00:00:00.000Z" },
    { id: "file-3", userId: "user-2", name: "Broken", creationDate: "yesterday" }
  ]
}

afterEach(killLeftovers)

describe("the contract's commands", () => {
  const dir = TempDirectory.make("contract")
  const env = { DATABASE_URL: `file:${dir}/filedata.db`, PORT: "0", HOST: "127.0.0.1" }
  const goodFile = TempDirectory.write(dir, "good.json", good)
  const badFile = TempDirectory.write(dir, "bad.json", badInLastEntry)

  it("imports, serves on a free port, answers, and stops cleanly on SIGTERM", { timeout: 180_000 }, async () => {
    const imported = await finish(start(["cli", "import", goodFile], env))
    expect(imported.code).toBe(0)

    const rejected = await finish(start(["cli", "import", badFile], env))
    expect(rejected.code).not.toBe(0)
    expect(rejected.stderr).toContain("$.files[1].creationDate")

    const server = start(["server"], env)
    const closed = finish(server)
    const base = await listening(server)
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(base).not.toMatch(/:0$/)

    const reply = await post(base, { fileId: "file-1", apiKey: "a-plaintext-api-key" })
    expect(reply.status).toBe(200)
    expect(await reply.json()).toEqual({
      name: "Contact form",
      creationDate: "2024-01-01T00:00:00.000Z",
      publicAvailability: true,
      SubmissionCounter: 2,
      VisitCounter: 10,
      submissions: [{ createdDate: "2024-01-02T09:30:00.000Z", content: { email: "a@example.com" } }]
    })
    // Nothing of the rejected fixture was written: its key is unknown.
    expect((await post(base, { fileId: "file-2", apiKey: "second-key" })).status).toBe(403)

    server.kill("SIGTERM")
    const exit = await closed
    expect(exit.code).toBe(0)
    expect(exit.stdout).not.toContain("a-plaintext-api-key")
  })

  it("refuses invalid configuration with one line naming the variable", { timeout: 120_000 }, async () => {
    const result = await finish(start(["server"], { ...env, PORT: "eighty" }))
    expect(result.code).not.toBe(0)
    const lines = result.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain("PORT")
  })
})
