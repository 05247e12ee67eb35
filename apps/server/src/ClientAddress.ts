/**
 * Which address a request is counted against for the per-address rate limit.
 *
 * @since 0.1.0
 */
import type { IncomingHttpHeaders } from "node:http"

const normalize = (address: string): string => (address.startsWith("::ffff:") ? address.slice(7) : address)

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
    const last = (Array.isArray(forwarded) ? forwarded.join(",") : forwarded)
      ?.split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "")
      .at(-1)
    if (last !== undefined) return normalize(last)
  }
  return socketAddress === undefined ? "unknown" : normalize(socketAddress)
}
