/**
 * Which address a request is counted against for the per-address rate limit.
 *
 * @since 0.1.0
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Option from "effect/Option"

const normalize = (address: string): string => (address.startsWith("::ffff:") ? address.slice(7) : address)

/**
 * The socket's peer, or with `trustProxy` the last `X-Forwarded-For` entry: the one the trusted proxy
 * appended, which a client cannot forge (the entries before it are whatever the client sent).
 *
 * @since 0.1.0
 * @category accessors
 */
export const of = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string => {
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]
    const last = forwarded
      ?.split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "")
      .at(-1)
    if (last !== undefined) return normalize(last)
  }
  return Option.match(request.remoteAddress, { onNone: () => "unknown", onSome: normalize })
}
