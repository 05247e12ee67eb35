/**
 * What one client may hold of the listener before it asks anything: connections per address, and the time to
 * send a first request head. Node bounds the connections of everyone together (`HTTP_MAX_CONNECTIONS`) and a
 * request once its first byte has come (`HTTP_HEADERS_TIMEOUT_MS`), but neither the share of one address nor
 * a connection that never sends a byte: idle connections from one address would fill the listener and lock
 * every other client out for as long as they are held (docs/security.md#threat-model).
 *
 * @since 0.1.0
 */

import type { Server } from "node:http"
import type { Socket } from "node:net"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Open connections one address may hold; more from it are closed as soon as they are accepted. */
  readonly maxConnectionsPerAddress: number
  /** Time from the accept until the first request head is complete. */
  readonly firstRequestTimeoutMillis: number
}

/**
 * The guard installed on a listener.
 *
 * @since 0.1.0
 * @category models
 */
export interface Guard {
  /** Call when a request head on `socket` is complete: its connection has shown it is used. */
  readonly headReceived: (socket: Socket) => void
}

const hexGroups = (part: string): Array<string> => (part === "" ? [] : part.split(":"))

/**
 * Whom a connection from `address` is counted against: an IPv4 address (IPv4-mapped IPv6 included) as itself,
 * an IPv6 address by its /64 prefix, the block a single subscriber or host is given, so that one host cannot
 * step around the cap by using more of its own addresses.
 *
 * @since 0.1.0
 * @category subjects
 */
export const subjectOf = (address: string | undefined): string => {
  if (address === undefined) return ""
  if (!address.includes(":")) return address
  const lower = address.toLowerCase()
  if (lower.startsWith("::ffff:") && lower.includes(".")) return lower.slice("::ffff:".length)
  const bare = lower.split("%", 1)[0] ?? lower
  const compressed = bare.indexOf("::")
  const groups =
    compressed === -1
      ? hexGroups(bare)
      : (() => {
          const left = hexGroups(bare.slice(0, compressed))
          const right = hexGroups(bare.slice(compressed + 2))
          // An embedded IPv4 tail takes the room of two groups.
          const width = right.length + (right.some((group) => group.includes(".")) ? 1 : 0)
          return [...left, ...Array.from({ length: Math.max(0, 8 - left.length - width) }, () => "0"), ...right]
        })()
  return `${groups
    .slice(0, 4)
    .map((group) => (/^[0-9a-f]{1,4}$/.test(group) ? Number.parseInt(group, 16).toString(16) : group))
    .join(":")}::/64`
}

/**
 * Installs the guard on `server`: a connection from an address that already holds
 * `maxConnectionsPerAddress` is closed at once (and handed to `refused`, to be counted), and one whose first
 * request head is not complete `firstRequestTimeoutMillis` after its accept is handed to `expired` (which must
 * close it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const install = (
  server: Server,
  options: Options,
  expired: (socket: Socket) => void,
  refused: (socket: Socket) => void = () => {}
): Guard => {
  const held = new Map<string, number>()
  const deadlines = new WeakMap<Socket, NodeJS.Timeout>()

  server.on("connection", (socket: Socket) => {
    const subject = subjectOf(socket.remoteAddress)
    const count = held.get(subject) ?? 0
    if (count >= options.maxConnectionsPerAddress) {
      socket.destroy()
      refused(socket)
      return
    }
    held.set(subject, count + 1)
    deadlines.set(
      socket,
      setTimeout(() => expired(socket), options.firstRequestTimeoutMillis)
    )
    // The timer is looked up, not kept here: a connection may stay open long after its head came.
    socket.once("close", () => {
      clearTimeout(deadlines.get(socket))
      deadlines.delete(socket)
      const left = (held.get(subject) ?? 1) - 1
      if (left === 0) held.delete(subject)
      else held.set(subject, left)
    })
  })

  return {
    headReceived: (socket) => {
      const deadline = deadlines.get(socket)
      if (deadline === undefined) return
      clearTimeout(deadline)
      deadlines.delete(socket)
    }
  }
}
