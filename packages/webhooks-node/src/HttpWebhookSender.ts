/**
 * The `WebhookSender` port on `node:http`/`node:https`: signs each attempt as Standard Webhooks says and sends
 * it, guarded against server-side request forgery.
 *
 * - URLs: `https://` only, no user or password, at most 2,048 characters; `allowPrivateNetworks` also lets
 *   `http://` through and lifts the address rules.
 * - Addresses: every address a host resolves to must be global (`AddressPolicy`). The check runs inside the
 *   connection's own `lookup`, so the address checked is the one connected to: a name that answers a public
 *   address at registration and a private one later is refused at the later connection (no DNS-rebinding gap).
 * - Redirects are answers, never followed; the whole attempt (resolution, connection, TLS, answer) is bounded by
 *   the attempt's timeout; at most {@link maxBodyBytes} of the answer are read, and only to let the connection be
 *   reused: the body is never kept or returned.
 *
 * @since 0.2.0
 */
import type { LookupAddress, LookupOptions } from "node:dns"
import { lookup as dnsLookup } from "node:dns/promises"
import * as http from "node:http"
import * as https from "node:https"
import { isIP } from "node:net"
import { createSecureContext, rootCertificates } from "node:tls"
import { WebhookSender } from "@filedata/core"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as AddressPolicy from "./AddressPolicy.js"
import * as Failure from "./internal/failure.js"
import * as RetryAfter from "./internal/retryAfter.js"
import * as Signature from "./internal/signature.js"

/**
 * The longest URL accepted.
 *
 * @since 0.2.0
 * @category constants
 */
export const maxUrlLength = 2048

/**
 * The most of an answer's body read before the connection is dropped.
 *
 * @since 0.2.0
 * @category constants
 */
export const maxBodyBytes = 4096

/**
 * Resolves a host name to its addresses (all of them). `dns.lookup` by default; tests give their own, so no
 * test depends on real DNS.
 *
 * @since 0.2.0
 * @category models
 */
export type Resolve = (hostname: string) => Promise<ReadonlyArray<LookupAddress>>

/**
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** `WEBHOOK_ALLOW_PRIVATE_NETWORKS`: `http://` and non-global addresses allowed, for trusted networks and tests. */
  readonly allowPrivateNetworks: boolean
  /** `WEBHOOK_TIMEOUT_MS`: bounds `check`'s resolution of the host; each attempt carries its own timeout. */
  readonly timeoutMillis: number
  /** The most connections the sender holds open at once, to every receiver together (default 256). */
  readonly maxSockets?: number
  readonly resolve?: Resolve
  /** Certificates (PEM) trusted beside Node's root store, for receivers behind a private certificate authority. */
  readonly trustedCertificates?: ReadonlyArray<string>
}

const defaultResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true })

/**
 * The URL rules `check` and `send` share; `Left` is the reason shown to the owner.
 *
 * @since 0.2.0
 * @category validation
 */
export const parseUrl = (text: string, allowPrivateNetworks: boolean): Either.Either<URL, string> => {
  if (text.length > maxUrlLength) return Either.left(`the URL is longer than ${maxUrlLength} characters`)
  if (!URL.canParse(text)) return Either.left("not a URL")
  const url = new URL(text)
  if (url.protocol !== "https:" && !(allowPrivateNetworks && url.protocol === "http:")) {
    return Either.left(allowPrivateNetworks ? "the URL must use https or http" : "the URL must use https")
  }
  if (url.username !== "" || url.password !== "") return Either.left("the URL must not hold a user or password")
  if (url.hostname === "") return Either.left("the URL has no host")
  return Either.right(url)
}

const bareHost = (url: URL) => (url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname)

/** The first non-global address of a host's answer, described. */
const refusal = (addresses: ReadonlyArray<{ readonly address: string }>): Option.Option<string> => {
  for (const { address } of addresses) {
    const found = AddressPolicy.classify(address)
    if (Option.isSome(found)) return Option.some(AddressPolicy.describe(found.value))
  }
  return Option.none()
}

// The error the guarded lookup gives the connection: it surfaces as the request's error, with this code.
const ADDRESS_REFUSED = "EFILEDATA_ADDRESS_REFUSED"

/**
 * A sender on two bounded keep-alive agents (https, and http when private networks are allowed), closed with
 * the scope.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<WebhookSender.WebhookSenderShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const resolve = options.resolve ?? defaultResolve
    const maxSockets = options.maxSockets ?? 256
    const agentOptions = { keepAlive: true, maxSockets, maxTotalSockets: maxSockets, maxFreeSockets: maxSockets }
    const agents = yield* Effect.acquireRelease(
      Effect.sync(() => ({
        https: new https.Agent({
          ...agentOptions,
          // One context for every connection: given `ca` alone, each connection would parse the root store again.
          ...(options.trustedCertificates === undefined
            ? {}
            : { secureContext: createSecureContext({ ca: [...rootCertificates, ...options.trustedCertificates] }) })
        }),
        http: new http.Agent(agentOptions)
      })),
      (agents) =>
        Effect.sync(() => {
          agents.https.destroy()
          agents.http.destroy()
        })
    )

    // The connection's lookup: resolves with `resolve` and, unless private networks are allowed, refuses the
    // whole answer when any address is not global. Node connects only to what this hands back.
    const lookup = (
      hostname: string,
      lookupOptions: LookupOptions,
      callback: (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void
    ): void => {
      resolve(hostname).then(
        (answer) => {
          const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : undefined
          const addresses = answer.filter((entry) => wanted === undefined || entry.family === wanted)
          const refused = options.allowPrivateNetworks ? Option.none() : refusal(addresses)
          if (Option.isSome(refused)) {
            return callback(
              Object.assign(new Error(`the host resolves to ${refused.value}`), { code: ADDRESS_REFUSED }),
              ""
            )
          }
          const first = addresses[0]
          if (first === undefined) {
            return callback(Object.assign(new Error("no address"), { code: "ENOTFOUND" }), "")
          }
          if (lookupOptions.all === true) return callback(null, [...addresses])
          callback(null, first.address, first.family)
        },
        // A resolver's failure is the host not resolving, whatever the resolver called it.
        (error: NodeJS.ErrnoException) =>
          callback(
            typeof error?.code === "string" ? error : Object.assign(new Error("no address"), { code: "ENOTFOUND" }),
            ""
          )
      )
    }

    const check = (text: string): Effect.Effect<void, WebhookSender.WebhookUrlRefused> =>
      Effect.gen(function* () {
        const url = yield* Either.mapLeft(
          parseUrl(text, options.allowPrivateNetworks),
          (reason) => new WebhookSender.WebhookUrlRefused({ reason })
        )
        if (options.allowPrivateNetworks) return
        const host = bareHost(url)
        const refused =
          isIP(host) !== 0
            ? Option.map(AddressPolicy.classify(host), (found) => `the host is ${AddressPolicy.describe(found)}`)
            : yield* Effect.tryPromise(() => resolve(host)).pipe(
                Effect.timeout(options.timeoutMillis),
                Effect.match({
                  onFailure: () => Option.some("the host does not resolve"),
                  onSuccess: (addresses) =>
                    addresses.length === 0
                      ? Option.some("the host does not resolve")
                      : Option.map(refusal(addresses), (described) => `the host resolves to ${described}`)
                })
              )
        if (Option.isSome(refused)) return yield* new WebhookSender.WebhookUrlRefused({ reason: refused.value })
      })

    const send = (attempt: WebhookSender.Attempt): Effect.Effect<WebhookSender.Outcome> =>
      Effect.gen(function* () {
        const started = performance.now()
        const elapsed = () => Math.round(performance.now() - started)
        const notAnswered = (failure: WebhookSender.FailureClass, detail: string): WebhookSender.Outcome => ({
          _tag: "NotAnswered",
          failure,
          detail,
          durationMillis: elapsed()
        })
        const parsed = parseUrl(attempt.url, options.allowPrivateNetworks)
        if (Either.isLeft(parsed)) return notAnswered("invalid_url", parsed.left)
        const url = parsed.right
        const host = bareHost(url)
        // Node skips the lookup for an address literal: it is judged here, and cannot change its answer.
        if (!options.allowPrivateNetworks && isIP(host) !== 0) {
          const found = AddressPolicy.classify(host)
          if (Option.isSome(found)) {
            return notAnswered("address_refused", `the host is ${AddressPolicy.describe(found.value)}`)
          }
        }
        const now = yield* Clock.currentTimeMillis
        const timestamp = Math.floor(now / 1000)
        const body = Buffer.from(attempt.body, "utf8")
        const headers = {
          "content-type": "application/json",
          "content-length": String(body.length),
          "user-agent": "filedata-webhooks",
          "webhook-id": attempt.eventId,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": Signature.sign(attempt.eventId, timestamp, attempt.body, attempt.secrets)
        }
        return yield* Effect.async<WebhookSender.Outcome>((resume) => {
          let settled = false
          const finish = (outcome: WebhookSender.Outcome) => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            resume(Effect.succeed(outcome))
          }
          const request = (url.protocol === "https:" ? https : http).request(url, {
            method: "POST",
            agent: url.protocol === "https:" ? agents.https : agents.http,
            headers,
            lookup
          })
          const timer = setTimeout(() => {
            finish(notAnswered("timeout", `no complete answer within ${attempt.timeoutMillis} ms`))
            request.destroy()
          }, attempt.timeoutMillis)
          request.on("error", (error: NodeJS.ErrnoException) => {
            if (error.code === ADDRESS_REFUSED) return finish(notAnswered("address_refused", error.message))
            const { detail, failure } = Failure.classify(error)
            finish(notAnswered(failure, detail))
          })
          request.on("response", (response) => {
            const status = response.statusCode ?? 0
            const answered = (): WebhookSender.Outcome => ({
              _tag: "Answered",
              status,
              retryAfterMillis:
                status === 429 || status === 503
                  ? RetryAfter.parse(headerText(response.headers["retry-after"]), now + elapsed())
                  : Option.none(),
              durationMillis: elapsed()
            })
            const declared = Number(response.headers["content-length"])
            if (Number.isFinite(declared) && declared > maxBodyBytes) {
              finish(answered())
              return response.destroy()
            }
            let read = 0
            response.on("data", (chunk: Buffer) => {
              read += chunk.length
              if (read > maxBodyBytes) {
                finish(answered())
                response.destroy()
              }
            })
            response.on("end", () => finish(answered()))
            // The status came: a body cut short afterwards does not undo the answer.
            response.on("error", () => finish(answered()))
            response.on("close", () => finish(answered()))
          })
          request.end(body)
          return Effect.sync(() => {
            clearTimeout(timer)
            request.destroy()
          })
        })
      })

    return { check, send }
  })

const headerText = (value: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof value === "string" ? value : value?.[0]

/**
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<WebhookSender.WebhookSender> =>
  Layer.scoped(WebhookSender.WebhookSender, make(options))

/**
 * `WEBHOOK_ALLOW_PRIVATE_NETWORKS` (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`, default false) and `WEBHOOK_TIMEOUT_MS` (1 to 600000, default
 * 15000) as {@link Options}.
 *
 * @since 0.2.0
 * @category config
 */
export const config: Config.Config<Options> = Config.all({
  // The yes/no words of the service's other variables, in any case: `Config.boolean` takes them in lower case only
  // and refuses others with just "Expected a boolean value".
  allowPrivateNetworks: Config.nested(
    Config.primitive("WEBHOOK_ALLOW_PRIVATE_NETWORKS", (text) => {
      const word = text.trim().toLowerCase()
      const yes = ["true", "1", "yes", "on"].includes(word)
      return yes || ["false", "0", "no", "off"].includes(word)
        ? Either.right(yes)
        : Either.left(
            ConfigError.InvalidData(
              [],
              `Expected true, false, 1, 0, yes, no, on or off but received ${JSON.stringify(text)}`
            )
          )
    }),
    "WEBHOOK_ALLOW_PRIVATE_NETWORKS"
  ).pipe(Config.withDefault(false)),
  // Digits only: `Config.integer` reads a blank value as 0 and accepts `1e3`.
  timeoutMillis: Config.nested(
    Config.primitive("WEBHOOK_TIMEOUT_MS", (text) => {
      const value = Number(text.trim())
      return /^\d+$/.test(text.trim()) && value >= 1 && value <= 600_000
        ? Either.right(value)
        : Either.left(
            ConfigError.InvalidData([], `Expected a whole number from 1 to 600000 but received ${JSON.stringify(text)}`)
          )
    }),
    "WEBHOOK_TIMEOUT_MS"
  ).pipe(Config.withDefault(15_000))
})

/**
 * The sender configured from the environment ({@link config}).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerConfig: Layer.Layer<WebhookSender.WebhookSender, ConfigError.ConfigError> = Layer.scoped(
  WebhookSender.WebhookSender,
  Effect.flatMap(config, make)
)
