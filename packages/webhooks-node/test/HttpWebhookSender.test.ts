import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { WebhookSender } from "@filedata/core"
import { Conditions, TempDirectory } from "@filedata/testing"
import { HttpWebhookSender } from "@filedata/webhooks-node"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { Webhook } from "standardwebhooks"
import * as RetryAfter from "../src/internal/retryAfter.js"
import { closedPort, receiver } from "./Receivers.js"

// The Standard Webhooks test vector (the reference libraries' tests).
const vector = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
}

const secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
const secretB = `whsec_${Buffer.alloc(32, 7).toString("base64")}`
const body = JSON.stringify({ type: "submissions.created", timestamp: "2026-11-28T04:00:00.000Z", data: {} })

const attempt = (url: string, overrides: Partial<WebhookSender.Attempt> = {}): WebhookSender.Attempt => ({
  url,
  eventId: "evt_1",
  body,
  secrets: [Redacted.make(secretA)],
  timeoutMillis: 10_000,
  ...overrides
})

// Receivers listen on loopback, so the tests that deliver allow private networks; the address rules are tested
// where nothing is delivered.
const privateSender = (options: Partial<HttpWebhookSender.Options> = {}) =>
  HttpWebhookSender.make({ allowPrivateNetworks: true, timeoutMillis: 5_000, ...options })

const publicSender = (resolve: HttpWebhookSender.Resolve) =>
  HttpWebhookSender.make({ allowPrivateNetworks: false, timeoutMillis: 5_000, resolve })

const fixed =
  (...addresses: ReadonlyArray<string>): HttpWebhookSender.Resolve =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))

const answered = (outcome: WebhookSender.Outcome) => {
  if (outcome._tag !== "Answered") throw new Error(`not answered: ${outcome.failure}: ${outcome.detail}`)
  return outcome
}
const notAnswered = (outcome: WebhookSender.Outcome) => {
  if (outcome._tag !== "NotAnswered") throw new Error(`answered ${outcome.status}`)
  return outcome
}

const refusalOf = (sender: WebhookSender.WebhookSenderShape, url: string) =>
  sender.check(url).pipe(Effect.match({ onFailure: (refused) => refused.reason, onSuccess: () => "accepted" }))

describe("HttpWebhookSender: signing and answers", () => {
  it.scopedLive("signs as Standard Webhooks: the reference library verifies every secret of a rotation", () =>
    Effect.gen(function* () {
      const hook = yield* receiver((_, response) => response.writeHead(204).end())
      const sender = yield* privateSender()
      const outcome = answered(
        yield* sender.send(attempt(hook.url, { secrets: [Redacted.make(secretA), Redacted.make(secretB)] }))
      )
      expect(outcome.status).toBe(204)
      expect(outcome.retryAfterMillis).toEqual(Option.none())
      const [delivery] = hook.received
      expect(delivery?.body).toBe(body)
      expect(delivery?.headers["content-type"]).toBe("application/json")
      expect(delivery?.headers["webhook-id"]).toBe("evt_1")
      expect(String(delivery?.headers["webhook-signature"]).split(" ")).toHaveLength(2)
      for (const secret of [secretA, secretB]) {
        expect(new Webhook(secret).verify(delivery?.body ?? "", delivery?.headers as Record<string, string>)).toEqual(
          JSON.parse(body)
        )
      }
      expect(() =>
        new Webhook(`whsec_${Buffer.alloc(32, 9).toString("base64")}`).verify(
          delivery?.body ?? "",
          delivery?.headers as Record<string, string>
        )
      ).toThrow()
    })
  )

  it.scoped("the published test vector: its id, timestamp, body and secret give its signature", () =>
    Effect.gen(function* () {
      const hook = yield* receiver((_, response) => response.writeHead(200).end())
      const sender = yield* privateSender()
      yield* TestClock.setTime(vector.timestamp * 1000 + 999)
      answered(
        yield* sender.send(
          attempt(hook.url, { eventId: vector.id, body: vector.body, secrets: [Redacted.make(vector.secret)] })
        )
      )
      expect(hook.received[0]?.headers["webhook-timestamp"]).toBe(String(vector.timestamp))
      expect(hook.received[0]?.headers["webhook-signature"]).toBe(vector.signature)
    })
  )

  it.scopedLive("a redirect is an answer and is never followed", () =>
    Effect.gen(function* () {
      const target = yield* receiver((_, response) => response.writeHead(200).end())
      const hook = yield* receiver((_, response) => response.writeHead(307, { location: target.url }).end())
      const sender = yield* privateSender()
      expect(answered(yield* sender.send(attempt(hook.url))).status).toBe(307)
      expect(hook.received).toHaveLength(1)
      expect(target.received).toHaveLength(0)
    })
  )

  it.scopedLive("a receiver that never answers: timeout, and the connection is closed", () =>
    Effect.gen(function* () {
      const hook = yield* receiver(() => {})
      const sender = yield* privateSender()
      const outcome = notAnswered(yield* sender.send(attempt(hook.url, { timeoutMillis: 200 })))
      expect(outcome.failure).toBe("timeout")
      expect(outcome.detail).toBe("no complete answer within 200 ms")
      expect(hook.received).toHaveLength(1)
      yield* Effect.promise(() =>
        Conditions.until(() => (hook.sockets.every((socket) => socket.closed) ? true : undefined), {
          what: "the hanging connection closed",
          limitMillis: 5_000
        })
      )
    })
  )

  it.scopedLive("an answer's body is read to a few KiB at most: a huge one is cut and its connection dropped", () =>
    Effect.gen(function* () {
      const chunk = Buffer.alloc(64 * 1024, "x")
      let written = 0
      const hook = yield* receiver((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        const more = () => {
          while (written < 64 * 1024 * 1024) {
            written += chunk.length
            if (!response.write(chunk)) return response.once("drain", more)
          }
          response.end()
        }
        response.on("error", () => {})
        more()
      })
      const sender = yield* privateSender()
      expect(answered(yield* sender.send(attempt(hook.url))).status).toBe(200)
      yield* Effect.promise(() =>
        Conditions.until(() => (hook.sockets[0]?.closed === true ? true : undefined), {
          what: "the connection of the huge answer closed",
          limitMillis: 5_000
        })
      )
      expect(written).toBeLessThan(64 * 1024 * 1024)
    })
  )

  it.scopedLive("small answers keep their connection for the next attempt", () =>
    Effect.gen(function* () {
      const hook = yield* receiver((_, response) => response.writeHead(200).end("ok"))
      const sender = yield* privateSender()
      for (let i = 0; i < 3; i++) answered(yield* sender.send(attempt(hook.url)))
      expect(hook.received).toHaveLength(3)
      expect(hook.sockets).toHaveLength(1)
    })
  )

  it.scopedLive("Retry-After of a 429 or 503, in seconds or as a date; ignored on other statuses", () =>
    Effect.gen(function* () {
      const answers: Array<[number, string]> = [
        [429, "120"],
        [503, new Date(Date.now() - 60_000).toUTCString()],
        [503, "soon"],
        [500, "120"],
        [429, ""]
      ]
      const hook = yield* receiver((_, response) => {
        const [status, retryAfter] = answers[hook.received.length - 1] ?? [200, ""]
        response.writeHead(status, retryAfter === "" ? {} : { "retry-after": retryAfter }).end()
      })
      const sender = yield* privateSender()
      const outcomes = yield* Effect.forEach(answers, () => sender.send(attempt(hook.url)))
      expect(outcomes.map((outcome) => answered(outcome).retryAfterMillis)).toEqual([
        Option.some(120_000),
        Option.some(0),
        Option.none(),
        Option.none(),
        Option.none()
      ])
      expect(outcomes.map((outcome) => answered(outcome).status)).toEqual([429, 503, 503, 500, 429])
    })
  )

  it("Retry-After's forms", () => {
    const now = Date.parse("2026-11-28T04:00:00.000Z")
    expect(RetryAfter.parse("0", now)).toEqual(Option.some(0))
    expect(RetryAfter.parse(" 30 ", now)).toEqual(Option.some(30_000))
    expect(RetryAfter.parse("Sat, 28 Nov 2026 04:01:00 GMT", now)).toEqual(Option.some(60_000))
    expect(RetryAfter.parse("Saturday, 28-Nov-26 04:01:00 GMT", now)).toEqual(Option.some(60_000))
    expect(RetryAfter.parse("Sat Nov 28 04:01:00 2026", now)).toEqual(Option.some(60_000))
    for (const refused of [undefined, "", "-5", "1.5", "1e3", "99999999999999999999", "soon", "2026-11-28"]) {
      expect(RetryAfter.parse(refused, now)).toEqual(Option.none())
    }
  })
})

describe("HttpWebhookSender: failures", () => {
  it.scopedLive("a refused connection, a host that does not resolve: their class, never the URL's query", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const sender = yield* privateSender({
        resolve: async () => {
          throw Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.test?token=s3cret"), { code: "ENOTFOUND" })
        }
      })
      const refused = notAnswered(yield* sender.send(attempt(`http://127.0.0.1:${port}/hook?token=s3cret`)))
      expect(refused).toMatchObject({ failure: "connection", detail: "the connection was refused (ECONNREFUSED)" })
      const unresolved = notAnswered(yield* sender.send(attempt("http://nowhere.test/hook?token=s3cret")))
      expect(unresolved).toMatchObject({ failure: "dns", detail: "the host does not resolve (ENOTFOUND)" })
      for (const outcome of [refused, unresolved]) expect(JSON.stringify(outcome)).not.toContain("s3cret")
      const failing = yield* privateSender({ resolve: () => Promise.reject(new Error("resolver down")) })
      expect(notAnswered(yield* failing.send(attempt("http://nowhere.test/hook")))).toMatchObject({
        failure: "dns",
        detail: "the host does not resolve (ENOTFOUND)"
      })
    })
  )

  it.scopedLive("an answer that is not HTTP: a connection failure", () =>
    Effect.gen(function* () {
      const hook = yield* receiver((request) => request.socket.end("SSH-2.0-OpenSSH\r\n\r\n"))
      const sender = yield* privateSender()
      expect(notAnswered(yield* sender.send(attempt(hook.url))).failure).toBe("connection")
    })
  )

  it.scopedLive("an invalid URL is no attempt", () =>
    Effect.gen(function* () {
      const sender = yield* privateSender()
      expect(notAnswered(yield* sender.send(attempt("ftp://example.com/")))).toMatchObject({
        failure: "invalid_url",
        detail: "the URL must use https or http"
      })
    })
  )
})

describe("HttpWebhookSender: https", () => {
  // A self-signed certificate for 127.0.0.1, made for this run.
  const certificate = () => {
    const dir = TempDirectory.make("webhook-tls")
    const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")]
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
        ...[
          "-keyout",
          key,
          "-out",
          cert,
          "-days",
          "1",
          "-subj",
          "/CN=127.0.0.1",
          "-addext",
          "subjectAltName=IP:127.0.0.1"
        ]
      ],
      { stdio: "ignore" }
    )
    return { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") }
  }

  it.scopedLive("delivers over TLS to a certificate it trusts, and refuses one it does not", () =>
    Effect.gen(function* () {
      const tls = certificate()
      const hook = yield* receiver((_, response) => response.writeHead(200).end(), tls)
      const trusting = yield* privateSender({ trustedCertificates: [tls.cert] })
      expect(answered(yield* trusting.send(attempt(hook.url))).status).toBe(200)
      expect(new Webhook(secretA).verify(body, hook.received[0]?.headers as Record<string, string>)).toBeDefined()
      const untrusting = yield* privateSender()
      const outcome = notAnswered(yield* untrusting.send(attempt(hook.url)))
      expect(outcome.failure).toBe("tls")
      expect(outcome.detail).toMatch(/^the TLS handshake failed \([A-Z_]+\)$/)
      expect(hook.received).toHaveLength(1)
    })
  )
})

// Registration only: the literal addresses are judged without a connection, names are resolved by a resolver the
// test gives, and nothing is sent anywhere.
describe("HttpWebhookSender: the SSRF guard", () => {
  const nonGlobal: ReadonlyArray<readonly [string, string]> = [
    ["0.0.0.0", "an unspecified address"],
    ["127.0.0.1", "a loopback address"],
    ["10.0.0.1", "a private (RFC 1918) address"],
    ["172.16.5.4", "a private (RFC 1918) address"],
    ["192.168.1.1", "a private (RFC 1918) address"],
    ["100.64.0.1", "a carrier-grade NAT address"],
    ["169.254.169.254", "a link-local address"],
    ["224.0.0.1", "a multicast address"],
    ["255.255.255.255", "a reserved address"],
    ["240.0.0.1", "a reserved address"],
    ["192.0.2.1", "a documentation address"],
    ["198.18.0.1", "a benchmarking address"],
    ["::", "an unspecified address"],
    ["::1", "a loopback address"],
    ["fe80::1", "a link-local address"],
    ["fd00::1", "an unique-local address"],
    ["ff02::1", "a multicast address"],
    ["2001:db8::1", "a documentation address"],
    ["::ffff:127.0.0.1", "a loopback address in IPv4-mapped form"],
    ["64:ff9b::a00:1", "a private (RFC 1918) address in NAT64 form"],
    ["2002:a9fe:a9fe::1", "a link-local address in 6to4 form"]
  ]
  const literal = (address: string) => (address.includes(":") ? `[${address}]` : address)

  it.scopedLive("every non-global class is refused at registration, as a literal and as a name resolving to it", () =>
    Effect.gen(function* () {
      for (const [address, described] of nonGlobal) {
        const sender = yield* publicSender(fixed("93.184.216.34", address))
        expect(yield* refusalOf(sender, `https://${literal(address)}/hook`)).toBe(`the host is ${described}`)
        expect(yield* refusalOf(sender, "https://hooks.example.com/hook")).toBe(`the host resolves to ${described}`)
      }
    })
  )

  it.scopedLive("a host of global addresses only is accepted; one that does not resolve is refused", () =>
    Effect.gen(function* () {
      const global = yield* publicSender(fixed("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"))
      expect(yield* refusalOf(global, "https://hooks.example.com/hook?token=1")).toBe("accepted")
      expect(yield* refusalOf(global, "https://8.8.8.8/hook")).toBe("accepted")
      expect(yield* refusalOf(global, "https://[2606:4700::1111]/hook")).toBe("accepted")
      const nothing = yield* publicSender(fixed())
      expect(yield* refusalOf(nothing, "https://hooks.example.com/")).toBe("the host does not resolve")
      const failing = yield* publicSender(() => Promise.reject(new Error("ENOTFOUND")))
      expect(yield* refusalOf(failing, "https://hooks.example.com/")).toBe("the host does not resolve")
      const hanging = yield* HttpWebhookSender.make({
        allowPrivateNetworks: false,
        timeoutMillis: 50,
        resolve: () => new Promise(() => {})
      })
      expect(yield* refusalOf(hanging, "https://hooks.example.com/")).toBe("the host does not resolve")
    })
  )

  it.scopedLive("URL rules: https only, no user or password, at most 2,048 characters", () =>
    Effect.gen(function* () {
      const sender = yield* publicSender(fixed("93.184.216.34"))
      expect(yield* refusalOf(sender, "http://hooks.example.com/")).toBe("the URL must use https")
      expect(yield* refusalOf(sender, "ftp://hooks.example.com/")).toBe("the URL must use https")
      expect(yield* refusalOf(sender, "https://user:pass@hooks.example.com/")).toBe(
        "the URL must not hold a user or password"
      )
      expect(yield* refusalOf(sender, "https://user@hooks.example.com/")).toBe(
        "the URL must not hold a user or password"
      )
      expect(yield* refusalOf(sender, "not a url")).toBe("not a URL")
      const longest = `https://hooks.example.com/${"a".repeat(2048 - "https://hooks.example.com/".length)}`
      expect(yield* refusalOf(sender, longest)).toBe("accepted")
      expect(yield* refusalOf(sender, `${longest}a`)).toBe("the URL is longer than 2048 characters")
      // The WHATWG parser reads these as 127.0.0.1: the address is judged after parsing.
      for (const disguised of ["https://0x7f.1/", "https://2130706433/", "https://127.1/"]) {
        expect(yield* refusalOf(sender, disguised)).toBe("the host is a loopback address")
      }
    })
  )

  it.scopedLive("allowing private networks lifts the address rules and lets http through", () =>
    Effect.gen(function* () {
      const sender = yield* privateSender({ resolve: fixed("127.0.0.1") })
      expect(yield* refusalOf(sender, "http://127.0.0.1:8080/hook")).toBe("accepted")
      expect(yield* refusalOf(sender, "https://internal.example/hook")).toBe("accepted")
      expect(yield* refusalOf(sender, "ftp://127.0.0.1/")).toBe("the URL must use https or http")
      expect(yield* refusalOf(sender, "http://a:b@127.0.0.1/")).toBe("the URL must not hold a user or password")
    })
  )

  it.scopedLive("the address connected to is the one checked: a name that turns private after registration", () =>
    Effect.gen(function* () {
      const hook = yield* receiver((_, response) => response.writeHead(200).end())
      let answers = 0
      const rebinding: HttpWebhookSender.Resolve = async () => [
        { address: answers++ === 0 ? "93.184.216.34" : "127.0.0.1", family: 4 }
      ]
      const sender = yield* publicSender(rebinding)
      const url = `https://rebind.example:${hook.port}/hook?token=s3cret`
      expect(yield* refusalOf(sender, url)).toBe("accepted")
      const outcome = notAnswered(yield* sender.send(attempt(url)))
      expect(outcome).toMatchObject({ failure: "address_refused", detail: "the host resolves to a loopback address" })
      const literal = notAnswered(yield* sender.send(attempt(`https://127.0.0.1:${hook.port}/hook`)))
      expect(literal).toMatchObject({ failure: "address_refused", detail: "the host is a loopback address" })
      expect(hook.received).toHaveLength(0)
      expect(hook.sockets).toHaveLength(0)
    })
  )

  it.scopedLive("a connection goes to the resolver's answer, so with private networks allowed a name reaches it", () =>
    Effect.gen(function* () {
      const hook = yield* receiver((_, response) => response.writeHead(202).end())
      const sender = yield* privateSender({ resolve: fixed("127.0.0.1") })
      expect(answered(yield* sender.send(attempt(`http://hooks.internal:${hook.port}/hook`))).status).toBe(202)
      expect(hook.received[0]?.headers.host).toBe(`hooks.internal:${hook.port}`)
    })
  )
})

describe("HttpWebhookSender.layerConfig", () => {
  const withEnv = (env: Record<string, string>) =>
    Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  const check = (url: string) => Effect.flatMap(WebhookSender.WebhookSender, (sender) => refusalOf(sender, url))

  it.scopedLive("WEBHOOK_ALLOW_PRIVATE_NETWORKS=true lets a loopback http URL through; by default it is refused", () =>
    Effect.gen(function* () {
      const allowing = HttpWebhookSender.layerConfig.pipe(
        Layer.provide(withEnv({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" }))
      )
      expect(yield* check("http://127.0.0.1:9/").pipe(Effect.provide(allowing))).toBe("accepted")
      const byDefault = HttpWebhookSender.layerConfig.pipe(Layer.provide(withEnv({})))
      expect(yield* check("https://127.0.0.1:9/").pipe(Effect.provide(byDefault))).toBe(
        "the host is a loopback address"
      )
    })
  )

  it.scopedLive("WEBHOOK_ALLOW_PRIVATE_NETWORKS takes the yes/no words in any case and lists them when refused", () =>
    Effect.gen(function* () {
      const configured = (value: string) =>
        HttpWebhookSender.layerConfig.pipe(Layer.provide(withEnv({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: value })))
      for (const value of ["YES", " on ", "1"]) {
        expect(yield* check("http://127.0.0.1:9/").pipe(Effect.provide(configured(value))), value).toBe("accepted")
      }
      for (const value of ["False", "off", "0"]) {
        expect(yield* check("https://127.0.0.1:9/").pipe(Effect.provide(configured(value))), value).toBe(
          "the host is a loopback address"
        )
      }
      const error = yield* Effect.flip(Layer.build(configured("maybe")))
      expect(String(error)).toContain("WEBHOOK_ALLOW_PRIVATE_NETWORKS")
      expect(String(error)).toContain('Expected true, false, 1, 0, yes, no, on or off but received "maybe"')
    })
  )

  it.effect("WEBHOOK_TIMEOUT_MS must be a whole number of milliseconds", () =>
    Effect.gen(function* () {
      for (const value of ["1e3", "", "0", "-1", "600001", "abc"]) {
        const error = yield* Effect.flip(
          Layer.build(HttpWebhookSender.layerConfig.pipe(Layer.provide(withEnv({ WEBHOOK_TIMEOUT_MS: value })))).pipe(
            Effect.scoped
          )
        )
        expect(String(error)).toContain("WEBHOOK_TIMEOUT_MS")
      }
    })
  )
})
