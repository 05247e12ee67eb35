// Webhook delivery as a receiver sees it: the server in this process (the built one where it is killed), a
// `node:http` receiver on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true), submissions appended by the CLI in
// another process. Each delivery is verified with `standardwebhooks`, the specification's reference library.
// Webhooks are registered through the storage port with a secret sealed under the server's
// WEBHOOK_ENCRYPTION_KEY, as the create operation does.

import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { DeliverWebhooks, FileData, WebhookStore } from "@filedata/core"
import { SqliteStorage } from "@filedata/sqlite"
import { Conditions, Processes, SqliteFiles, TempDirectory } from "@filedata/testing"
import { SealedSecrets } from "@filedata/webhooks-node"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Webhook as Verifier } from "standardwebhooks"
import * as InProcess from "./utils/InProcess.js"
import * as TestServer from "./utils/TestServer.js"

const { finish, serve, startBuilt } = Processes

const KEY = "webhook-owner-key"
const fixture = {
  users: [{ id: "alice", apiKeys: [KEY] }],
  files: [{ id: "form", userId: "alice", name: "Form", creationDate: "2024-01-01T00:00:00.000Z" }]
}

interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

// A receiver on loopback that answers each request with the status `answer` gives for its number (from 0), or
// never when it gives "hang".
const receiver = async (answer: (n: number) => number | "hang") => {
  const received: Array<Received> = []
  const server: Server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => {
      const status = answer(received.length)
      received.push({ headers: request.headers, body })
      if (status !== "hang") response.writeHead(status).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=query-secret`
  return {
    url,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const encryptionKey = randomBytes(32).toString("base64")

// Registers a webhook of "form" in the database file, its secret sealed under the server's key.
const register = (filename: string, url: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* WebhookStore.WebhookStore
      const secrets = SealedSecrets.make(Redacted.make(new Uint8Array(Buffer.from(encryptionKey, "base64"))))
      const secret = yield* secrets.generate
      const webhook = yield* store.create({
        fileId: FileData.FileId.make("form"),
        url,
        sealSecret: (id) => secrets.seal(secret, id)
      })
      return { webhook, secret: Redacted.value(secret) }
    }).pipe(Effect.provide(SqliteStorage.layer({ filename })), Effect.scoped)
  )

const find = (filename: string, id: string) =>
  Effect.runPromise(
    Effect.flatMap(WebhookStore.WebhookStore, (store) => store.find(id)).pipe(
      Effect.provide(SqliteStorage.layer({ filename })),
      Effect.scoped
    )
  )

const append = async (env: Record<string, string>, dir: string, n: number) => {
  const document = TempDirectory.write(dir, `append-${n}.json`, {
    files: [{ id: "form", submissions: [{ createdDate: "2024-03-01T00:00:00.000Z", content: { n: String(n) } }] }]
  })
  const appended = await finish(startBuilt("cli", ["append", document], env))
  expect(appended.code, appended.stderr).toBe(0)
}

const arrived = (received: ReadonlyArray<Received>, count: number, what: string) =>
  Conditions.until(async () => (received.length >= count ? received.slice() : undefined), {
    what,
    limitMillis: 20_000
  })

const setUp = async (name: string, extra: Record<string, string> = {}) => {
  const imported = await TestServer.importedDatabase(name, fixture)
  const env = {
    ...imported.env,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_ENCRYPTION_KEY: encryptionKey,
    WEBHOOK_RETRY_SCHEDULE_MS: "200,200",
    LOG_LEVEL: "info",
    ...extra
  }
  return { env, dir: TempDirectory.make(name), filename: imported.filename }
}

afterEach(() => Processes.killLeftovers())

describe("webhook delivery by the server (SQLite)", () => {
  it("delivers what was appended while no server ran, signed as standardwebhooks verifies, with next to catch up", async () => {
    const { env, dir, filename } = await setUp("webhook-delivered")
    const hook = await receiver(() => 204)
    const { webhook, secret } = await register(filename, hook.url)
    await append(env, dir, 1)
    const served = await InProcess.serve(env)
    try {
      const [delivery] = await arrived(hook.received, 1, "the first delivery")
      const event = new Verifier(secret).verify(delivery?.body ?? "", delivery?.headers as Record<string, string>) as {
        type: string
        data: {
          fileId: string
          SubmissionCounter: number
          submissions: Array<{ content: { n: string } }>
          next: string
        }
      }
      expect(event.type).toBe("submissions.created")
      expect(event.data).toMatchObject({ fileId: "form", SubmissionCounter: 1, submissions: [{ content: { n: "1" } }] })
      expect(delivery?.headers["content-type"]).toBe("application/json")
      // An append while the server runs is delivered too; its event's next catches a reader up to it.
      await append(env, dir, 2)
      const [, second] = await arrived(hook.received, 2, "the second delivery")
      const next = JSON.parse(second?.body ?? "").data.next
      const page = await fetch(`${served.base.replace("0.0.0.0", "127.0.0.1")}/api/v1/file-data/submissions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ fileId: "form", apiKey: KEY, after: next })
      }).then((response) => response.json())
      expect(page.submissions).toEqual([])
      const log = await Effect.runPromise(
        Effect.flatMap(WebhookStore.WebhookStore, (store) => store.deliveries(webhook.id, 10)).pipe(
          Effect.provide(SqliteStorage.layer({ filename })),
          Effect.scoped
        )
      )
      expect(log.map((entry) => entry.outcome)).toEqual(["delivered", "delivered"])
    } finally {
      await InProcess.stop(served)
      await hook.close()
    }
    // No secret in the logs nor in the database file, nor the URL's query.
    const written = served.stdout()
    const stored = readFileSync(filename).toString("latin1")
    for (const text of [secret, secret.slice("whsec_".length)]) {
      expect(written).not.toContain(text)
      expect(stored).not.toContain(text)
    }
    expect(written).not.toContain("query-secret")
    // Nor the key the secrets are sealed under, which the settings line names as redacted.
    expect(written).toMatch(/"settings"/)
    expect(written).not.toContain(encryptionKey)
  }, 90_000)

  it("retries on the schedule under the same webhook-id, and disables the webhook on 410", async () => {
    const { env, dir, filename } = await setUp("webhook-retries")
    const hook = await receiver((n) => (n < 2 ? 500 : n === 2 ? 200 : 410))
    const { webhook } = await register(filename, hook.url)
    const served = await InProcess.serve(env)
    try {
      await append(env, dir, 1)
      const tries = await arrived(hook.received, 3, "two failures and a success")
      expect(new Set(tries.map((delivery) => delivery.headers["webhook-id"])).size).toBe(1)
      await append(env, dir, 2)
      await arrived(hook.received, 4, "the attempt answered 410")
      const disabled = await Conditions.until(
        async () => {
          const found = await find(filename, webhook.id)
          return found._tag === "Some" && !found.value.enabled ? found.value : undefined
        },
        { what: "the webhook disabled", limitMillis: 20_000 }
      )
      expect(Option.getOrNull(disabled.disabledReason)).toBe("gone")
      // A failed attempt is logged with ids and the status, never the URL.
      expect(served.stdout()).toMatch(/webhook attempt failed/)
      expect(served.stdout()).not.toContain("query-secret")
    } finally {
      await InProcess.stop(served)
      await hook.close()
    }
  }, 90_000)

  it("makes an attempt cut off by kill -9 again after a restart, under the same webhook-id", async () => {
    const { env, dir, filename } = await setUp("webhook-crash", { WEBHOOK_TIMEOUT_MS: "1000" })
    const hook = await receiver((n) => (n === 0 ? "hang" : 200))
    await register(filename, hook.url)
    await append(env, dir, 1)
    const first = await serve(env)
    await arrived(hook.received, 1, "the attempt that hangs")
    first.child.kill("SIGKILL")
    await first.closed
    // The lease runs out WEBHOOK_TIMEOUT_MS + leaseMarginMillis after the attempt began: that time is passed
    // here by moving the killed instance's lease back by as much, rather than waited for.
    const db = SqliteFiles.connect(filename)
    try {
      const leased = db
        .prepare("UPDATE webhook_events SET lease_until = lease_until - ? WHERE lease_until IS NOT NULL")
        .run(1000 + DeliverWebhooks.leaseMarginMillis)
      expect(leased.changes).toBe(1)
    } finally {
      db.close()
    }
    const second = await serve(env)
    try {
      const [cut, again] = await Conditions.until(
        async () => (hook.received.length >= 2 ? hook.received.slice() : undefined),
        { what: "the attempt made again", limitMillis: 30_000 }
      )
      expect(again?.headers["webhook-id"]).toBe(cut?.headers["webhook-id"])
      expect(again?.body).toBe(cut?.body)
    } finally {
      await Processes.stop(second)
      await hook.close()
    }
  }, 90_000)
  it("manages webhooks over HTTP with the read operations' key rules, and delivers to one created so", async () => {
    const { env, dir } = await setUp("webhook-http")
    const hook = await receiver(() => 200)
    const served = await InProcess.serve(env)
    const call = async (operation: string, body: unknown) => {
      const response = await fetch(`${served.base.replace("0.0.0.0", "127.0.0.1")}/api/v1/webhooks/${operation}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const text = await response.text()
      return { status: response.status, headers: response.headers, json: text === "" ? undefined : JSON.parse(text) }
    }
    try {
      const created = await call("create", { apiKey: KEY, fileId: "form", url: hook.url })
      expect(created.status).toBe(201)
      expect(created.json).toMatchObject({ fileId: "form", url: hook.url, enabled: true })
      expect(created.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      const { id, secret } = created.json
      expect((await call("create", { apiKey: "nobody", fileId: "form", url: hook.url })).status).toBe(403)
      expect((await call("create", { apiKey: KEY, fileId: "missing", url: hook.url })).status).toBe(404)
      const refused = await call("create", { apiKey: KEY, fileId: "form", url: "ftp://x", extra: 1 })
      expect(refused.status).toBe(422)
      expect(refused.json.errors.map((e: { pointer: string }) => e.pointer)).toEqual(["/extra"])
      const listed = await call("list", { apiKey: KEY })
      expect(listed.status).toBe(200)
      expect(listed.json.webhooks).toEqual([
        { id, fileId: "form", url: hook.url, enabled: true, createdAt: created.json.createdAt }
      ])
      expect((await call("enable", { apiKey: KEY, id: "wh_none" })).json.code).toBe("webhook_not_found")
      await append(env, dir, 1)
      const [delivery] = await arrived(hook.received, 1, "the delivery to the webhook created over HTTP")
      new Verifier(secret).verify(delivery?.body ?? "", delivery?.headers as Record<string, string>)
      const deliveries = await Conditions.until(
        async () => {
          const reply = await call("deliveries", { apiKey: KEY, id })
          return reply.json.deliveries.length > 0 ? reply : undefined
        },
        { what: "the attempt in the log", limitMillis: 10_000 }
      )
      expect(deliveries.json.deliveries[0]).toMatchObject({ attempt: 1, status: 200, outcome: "delivered" })
      const eventId = deliveries.json.deliveries[0].eventId
      expect(eventId).toBe(delivery?.headers["webhook-id"])
      const rotated = await call("rotate-secret", { apiKey: KEY, id })
      expect(rotated.status).toBe(200)
      expect(rotated.json.secret).not.toBe(secret)
      expect((await call("redeliver", { apiKey: KEY, id, eventId: "msg_none" })).json.code).toBe("event_not_found")
      const redelivered = await call("redeliver", { apiKey: KEY, id, eventId })
      expect(redelivered.status).toBe(202)
      // An empty reply framed by its length, not as an empty chunked body.
      expect(redelivered.headers.get("content-length")).toBe("0")
      expect(redelivered.headers.get("transfer-encoding")).toBeNull()
      const [, again] = await arrived(hook.received, 2, "the redelivery")
      expect(again?.headers["webhook-id"]).toBe(eventId)
      // Signed with both secrets during the overlap: each verifies it.
      new Verifier(secret).verify(again?.body ?? "", again?.headers as Record<string, string>)
      new Verifier(rotated.json.secret).verify(again?.body ?? "", again?.headers as Record<string, string>)
      expect((await call("delete", { apiKey: KEY, id })).status).toBe(204)
      expect((await call("delete", { apiKey: KEY, id })).status).toBe(404)
      expect(served.stdout()).not.toContain(secret.slice("whsec_".length))
    } finally {
      await InProcess.stop(served)
      await hook.close()
    }
  }, 90_000)

  it("sends RateLimit-Policy and RateLimit on every reply of every webhook operation, throttled ones too", async () => {
    const { env, dir } = await setUp("webhook-rate-limit", {
      RATE_LIMIT_MAX: "30",
      RATE_LIMIT_IP_MAX: "1000",
      RATE_LIMIT_WINDOW_MS: "60000"
    })
    const hook = await receiver(() => 200)
    const served = await InProcess.serve(env)
    // What the limiter has counted so far, to say what each reply must carry.
    let addressCount = 0
    const keyCounts = new Map<string, number>()
    const seen = new Set<string>()
    const call = async (operation: string, body: Record<string, unknown>, valid = true) => {
      const response = await fetch(`${served.base.replace("0.0.0.0", "127.0.0.1")}/api/v1/webhooks/${operation}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const text = await response.text()
      const json = text === "" ? undefined : JSON.parse(text)
      addressCount += 1
      const apiKey = typeof body.apiKey === "string" && valid ? body.apiKey : undefined
      const keyCount = apiKey === undefined ? 0 : (keyCounts.get(apiKey) ?? 0) + 1
      if (apiKey !== undefined) keyCounts.set(apiKey, keyCount)
      expect(response.headers.get("ratelimit-policy"), operation).toBe(
        '"api-key";q=30;w=60, "client-address";q=1000;w=60'
      )
      const standing = /^"client-address";r=(\d+);t=(\d+)(?:, "api-key";r=(\d+);t=(\d+))?$/.exec(
        response.headers.get("ratelimit") ?? ""
      )
      expect(standing, `${operation}: ${response.headers.get("ratelimit")}`).not.toBeNull()
      const [, addressLeft, addressReset, keyLeft, keyReset] = standing ?? []
      expect(Number(addressLeft)).toBe(1000 - addressCount)
      expect(Number(addressReset)).toBeGreaterThanOrEqual(1)
      expect(Number(addressReset)).toBeLessThanOrEqual(60)
      if (apiKey === undefined) expect(keyLeft).toBeUndefined()
      else {
        expect(Number(keyLeft), operation).toBe(Math.max(0, 30 - keyCount))
        expect(Number(keyReset)).toBeGreaterThanOrEqual(1)
        expect(Number(keyReset)).toBeLessThanOrEqual(60)
        if (response.status === 422 && json?.code === "rate_limited") {
          expect(response.headers.get("retry-after")).toBe(keyReset)
        }
      }
      seen.add(`${operation} ${response.status}${json?.code === undefined ? "" : ` ${json.code}`}`)
      return { status: response.status, json }
    }
    try {
      const created = await call("create", { apiKey: KEY, fileId: "form", url: hook.url })
      expect(created.status).toBe(201)
      const { id } = created.json
      expect((await call("create", { apiKey: KEY, fileId: "missing", url: hook.url })).status).toBe(404)
      expect((await call("list", { apiKey: KEY })).status).toBe(200)
      expect((await call("list", { apiKey: KEY, extra: 1 }, false)).status).toBe(422)
      expect((await call("enable", { apiKey: KEY, id })).status).toBe(200)
      expect((await call("enable", { apiKey: "nobody", id })).status).toBe(403)
      expect((await call("rotate-secret", { apiKey: KEY, id })).status).toBe(200)
      await append(env, dir, 1)
      await arrived(hook.received, 1, "the delivery")
      const deliveries = await Conditions.until(
        async () => {
          const reply = await call("deliveries", { apiKey: KEY, id })
          return reply.json.deliveries.length > 0 ? reply : undefined
        },
        { what: "the attempt in the log", limitMillis: 10_000 }
      )
      const eventId = deliveries.json.deliveries[0].eventId
      expect((await call("deliveries", { apiKey: KEY, id, limit: 0 }, false)).status).toBe(422)
      expect((await call("redeliver", { apiKey: KEY, id, eventId: "msg_none" })).status).toBe(404)
      expect((await call("redeliver", { apiKey: KEY, id, eventId })).status).toBe(202)
      expect((await call("delete", { apiKey: KEY, id: "wh_none" })).status).toBe(404)
      expect((await call("delete", { apiKey: KEY, id })).status).toBe(204)
      // A key sent in a header is not read; the refusal says where it goes.
      const headerKey = await fetch(`${served.base.replace("0.0.0.0", "127.0.0.1")}/api/v1/webhooks/list`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
        body: "{}"
      })
      addressCount += 1
      expect(headerKey.status).toBe(422)
      expect((await headerKey.json()).detail).toBe(
        '/apiKey: is required: send the API key in the JSON body as "apiKey" (the Authorization header is ignored)'
      )
      // The key's quota spent: each operation refused with 422 rate_limited carries both fields too.
      while ((keyCounts.get(KEY) ?? 0) < 30) await call("list", { apiKey: KEY })
      const bodies: Record<string, Record<string, unknown>> = {
        create: { apiKey: KEY, fileId: "form", url: hook.url },
        list: { apiKey: KEY },
        delete: { apiKey: KEY, id },
        enable: { apiKey: KEY, id },
        "rotate-secret": { apiKey: KEY, id },
        deliveries: { apiKey: KEY, id },
        redeliver: { apiKey: KEY, id, eventId }
      }
      for (const [operation, body] of Object.entries(bodies)) {
        const throttled = await call(operation, body)
        expect(throttled.status, operation).toBe(422)
        expect(throttled.json.code).toBe("rate_limited")
      }
      expect([...seen].sort()).toEqual(
        expect.arrayContaining([
          "create 201",
          "list 200",
          "enable 200",
          "rotate-secret 200",
          "deliveries 200",
          "redeliver 202",
          "delete 204",
          ...["create", "list", "delete", "enable", "rotate-secret", "deliveries", "redeliver"].map(
            (operation) => `${operation} 422 rate_limited`
          )
        ])
      )
    } finally {
      await InProcess.stop(served)
      await hook.close()
    }
  }, 90_000)
})
