/**
 * The HTTP section of the configuration: the limits on slow clients, the drain after a stop signal, and how
 * many requests may wait for submissions.
 *
 * @internal
 */
import { WaitingRequests } from "@filedata/core"
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import { flag, wholeNumber, wholeNumberIn } from "./configVariables.js"

/** @internal */
export interface HttpLimits {
  /** Time for a request's headers to arrive (`HTTP_HEADERS_TIMEOUT_MS`). */
  readonly headersTimeoutMillis: number
  /** Time for a whole request, headers and body, to arrive (`HTTP_REQUEST_TIMEOUT_MS`). */
  readonly requestTimeoutMillis: number
  /** How long an idle keep-alive connection stays open (`HTTP_KEEP_ALIVE_TIMEOUT_MS`). */
  readonly keepAliveTimeoutMillis: number
  /** Open connections at most; more are refused at once (`HTTP_MAX_CONNECTIONS`). */
  readonly maxConnections: number
  /**
   * Open connections one client address may hold, an IPv6 address counted by its /64 prefix; more from it
   * are refused at once (`HTTP_MAX_CONNECTIONS_PER_ADDRESS`). The address is the socket's peer: behind a
   * proxy, the proxy's.
   */
  readonly maxConnectionsPerAddress: number
  /** Time from a connection's accept until its first request head is complete (`HTTP_FIRST_REQUEST_TIMEOUT_MS`). */
  readonly firstRequestTimeoutMillis: number
  /** How long replies in flight may go on after a stop signal before their connections are cut (`HTTP_DRAIN_TIMEOUT_MS`). */
  readonly drainTimeoutMillis: number
  /** How long a reply may go on while the client accepts nothing of it, before it is abandoned (`HTTP_SEND_TIMEOUT_MS`). */
  readonly sendTimeoutMillis: number
  /**
   * Whether a reply asks V8 for a young collection after every few MiB of pages it sent
   * (`HTTP_COLLECT_SENT_PAGES`, on by default); absent, off.
   */
  readonly collectSentPages?: boolean | undefined
}

/** @internal */
export const defaultMaxConnectionsPerAddress = 100

/** @internal */
export const defaultSendTimeoutMillis = 30_000

/** @internal */
export const trustProxy = flag("TRUST_PROXY").pipe(Config.withDefault(false))

/** @internal */
export const http: Config.Config<HttpLimits> = Config.all({
  headersTimeoutMillis: wholeNumber("HTTP_HEADERS_TIMEOUT_MS", 10_000, 1, 600_000),
  requestTimeoutMillis: wholeNumber("HTTP_REQUEST_TIMEOUT_MS", 30_000, 1, 600_000),
  keepAliveTimeoutMillis: wholeNumber("HTTP_KEEP_ALIVE_TIMEOUT_MS", 5_000, 1, 600_000),
  maxConnections: wholeNumber("HTTP_MAX_CONNECTIONS", 1_000, 1, 1_000_000),
  maxConnectionsPerAddress: Config.option(wholeNumberIn("HTTP_MAX_CONNECTIONS_PER_ADDRESS", 1, 1_000_000)),
  firstRequestTimeoutMillis: wholeNumber("HTTP_FIRST_REQUEST_TIMEOUT_MS", 5_000, 1, 600_000),
  drainTimeoutMillis: wholeNumber("HTTP_DRAIN_TIMEOUT_MS", 10_000, 0, 600_000),
  sendTimeoutMillis: wholeNumber("HTTP_SEND_TIMEOUT_MS", defaultSendTimeoutMillis, 1, 600_000),
  collectSentPages: flag("HTTP_COLLECT_SENT_PAGES").pipe(Config.withDefault(true)),
  trustProxy
}).pipe(
  Config.map(({ maxConnectionsPerAddress, trustProxy, ...limits }) => ({
    ...limits,
    maxConnectionsPerAddress: Option.getOrElse(maxConnectionsPerAddress, () =>
      trustProxy ? limits.maxConnections : defaultMaxConnectionsPerAddress
    )
  }))
)

/** @internal */
export const longPoll: Config.Config<WaitingRequests.Limits> = Config.all({
  perKey: wholeNumber("LONG_POLL_MAX_PER_KEY", WaitingRequests.defaultLimits.perKey, 1, 1_000_000),
  perAddress: wholeNumber("LONG_POLL_MAX_PER_ADDRESS", WaitingRequests.defaultLimits.perAddress, 1, 1_000_000)
})
