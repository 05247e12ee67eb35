/**
 * What one client may hold of the listener before it asks anything: connections per address, and the time to
 * send a first request head. Node bounds the connections of everyone together (`HTTP_MAX_CONNECTIONS`) and a
 * request once its first byte has come (`HTTP_HEADERS_TIMEOUT_MS`), but neither the share of one address nor
 * a connection that never sends a byte: idle connections from one address would fill the listener and lock
 * every other client out for as long as they are held (docs/security.md#threat-model). Also how a connection
 * closed with its request body unread ends (`lingerOnClose`).
 *
 * @since 0.1.0
 */

import type { IncomingMessage, Server } from "node:http"
import { Socket } from "node:net"

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

/**
 * How long, and how many bytes of, a request body the server stops reading is still read and dropped after
 * the reply that closes its connection.
 *
 * @since 0.2.0
 * @category models
 */
export interface Linger {
  readonly millis: number
  readonly bytes: number
}

/**
 * The default {@link Linger}: a client has this long to read the reply before the connection is cut.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultLinger: Linger = { millis: 2_000, bytes: 1024 * 1024 }

/**
 * Makes the close that follows a reply to `request` (a `Connection: close` reply, such as the 422 of an
 * oversized body) the one RFC 9112, section 9.6, describes when the body was not read to its end: the reply
 * sent, the sending half closed, what the client still sends read and dropped until it closes its side or
 * `linger` runs out, and only then the connection cut. Cut at once, unread bytes make the kernel reset the
 * connection, and a reset can drop the reply before the client reads it.
 *
 * @since 0.2.0
 * @category lifecycle
 */
export const lingerOnClose = (request: IncomingMessage, linger: Linger = defaultLinger): void => {
  const socket = request.socket
  // Node closes a connection after its last reply with `destroySoon` (end, then destroy once written).
  socket.destroySoon = () => {
    if (request.complete || socket.destroyed) {
      Socket.prototype.destroySoon.call(socket)
      return
    }
    let dropped = 0
    // The body goes on arriving through the request, which drops it once nothing reads it.
    const drop = (chunk: Buffer) => {
      dropped += chunk.length
      if (dropped > linger.bytes) cut()
    }
    const cut = () => {
      clearTimeout(timer)
      request.off("data", drop)
      socket.destroy()
    }
    const timer = setTimeout(cut, linger.millis).unref()
    socket.once("end", cut)
    socket.once("close", cut)
    request.on("data", drop)
    request.resume()
    socket.end()
  }
}
