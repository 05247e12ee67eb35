/**
 * Which address a request is counted against for the per-address rate limit.
 *
 * @since 0.1.0
 */
import type { IncomingHttpHeaders } from "node:http"

const normalize = (address: string): string => (address.startsWith("::ffff:") ? address.slice(7) : address)

// The limiter keeps the address for up to two windows. A substring of the header would keep the whole
// header alive with it (V8 shares the parent's memory), so a client padding X-Forwarded-For with kilobytes
// before the proxy's entry would cost kilobytes per subject: keep a copy of just the entry.
const detached = (text: string): string => Buffer.from(text, "utf8").toString("utf8")

const lastEntry = (forwarded: string): string | undefined => {
  let end = forwarded.length
  while (end > 0) {
    const start = forwarded.lastIndexOf(",", end - 1)
    const entry = forwarded.slice(start + 1, end).trim()
    if (entry !== "") return entry
    end = start === -1 ? 0 : start
  }
  return undefined
}

/**
 * The socket's peer, or with `trustProxy` the last `X-Forwarded-For` entry: the one the trusted proxy
 * appended, which a client cannot forge (the entries before it are whatever the client sent).
 *
 * @since 0.1.0
 * @category accessors
 */
export const of = (
  headers: IncomingHttpHeaders | Readonly<Record<string, string | undefined>>,
  socketAddress: string | undefined,
  trustProxy: boolean
): string => {
  if (trustProxy) {
    const forwarded = headers["x-forwarded-for"]
    const last =
      forwarded === undefined ? undefined : lastEntry(Array.isArray(forwarded) ? forwarded.join(",") : forwarded)
    if (last !== undefined) return detached(normalize(last))
  }
  return socketAddress === undefined ? "unknown" : normalize(socketAddress)
}
