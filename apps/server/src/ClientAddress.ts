/**
 * Which address a request is counted against for the per-address rate limit.
 *
 * One client must not get several quotas out of several spellings of its address, so an address is counted
 * in one canonical form: IPv4 as a dotted quad; an IPv4-mapped IPv6 address (`::ffff:192.0.2.7`, in any
 * spelling) as the IPv4 address it maps; any other IPv6 address as its /64 prefix in RFC 5952 form
 * (`2001:db8:1:2::/64`), since one host or site is given a whole /64 and could otherwise count under 2^64
 * addresses. A port (`192.0.2.7:51234`, `[2001:db8::1]:443`), brackets and an IPv6 zone (`%eth0`) are
 * dropped. Parsing is exact: whatever is not an address in one of those forms is refused, never counted as
 * text (docs/security.md#client-addresses).
 *
 * @since 0.1.0
 */
import type { IncomingHttpHeaders } from "node:http"

// The limiter keeps the key for up to two windows. Keys are built anew from the parsed numbers with `join`,
// which makes a flat string of its own: a substring of the header would keep the whole header alive with it
// (V8 shares the parent's memory), so a client padding X-Forwarded-For with kilobytes before the proxy's
// entry would cost kilobytes per subject (docs/operations.md#memory-of-the-in-memory-rate-limiter).

type Parsed =
  | { readonly version: 4; readonly value: number }
  | { readonly version: 6; readonly groups: ReadonlyArray<number> }

const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/
const ZONE = /^[0-9A-Za-z._~-]+$/
const PORT = /^[0-9]{1,5}$/

// Four decimal octets without leading zeros, as `inet_pton` reads them (`010` would be octal to other
// parsers). By character codes: every request's socket address comes through here.
const parseIPv4 = (text: string): number | undefined => {
  let value = 0
  let octet = 0
  let digits = 0
  let dots = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 46) {
      if (digits === 0 || dots === 3) return undefined
      value = value * 256 + octet
      octet = 0
      digits = 0
      dots++
    } else if (code >= 48 && code <= 57) {
      if (digits > 0 && octet === 0) return undefined
      octet = octet * 10 + code - 48
      digits++
      if (octet > 255) return undefined
    } else {
      return undefined
    }
  }
  return digits === 0 || dots !== 3 ? undefined : value * 256 + octet
}

// Appends the groups of `text` (`a:b:c`, or empty); the last may be a dotted quad, two groups' worth.
const parseGroups = (text: string, groups: Array<number>, ipv4Last: boolean): boolean => {
  if (text === "") return true
  const parts = text.split(":")
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string
    if (HEX_GROUP.test(part)) {
      groups.push(Number.parseInt(part, 16))
      continue
    }
    const value = ipv4Last && i === parts.length - 1 ? parseIPv4(part) : undefined
    if (value === undefined) return false
    groups.push(Math.floor(value / 0x10000), value % 0x10000)
  }
  return true
}

const parseIPv6 = (text: string): ReadonlyArray<number> | undefined => {
  const percent = text.indexOf("%")
  if (percent !== -1 && !ZONE.test(text.slice(percent + 1))) return undefined
  const address = percent === -1 ? text : text.slice(0, percent)
  const gap = address.indexOf("::")
  const groups: Array<number> = []
  if (gap === -1) return parseGroups(address, groups, true) && groups.length === 8 ? groups : undefined
  if (address.includes("::", gap + 1)) return undefined
  const tail: Array<number> = []
  if (!parseGroups(address.slice(0, gap), groups, false) || !parseGroups(address.slice(gap + 2), tail, true)) {
    return undefined
  }
  // `::` stands for one zero group at least.
  if (groups.length + tail.length > 7) return undefined
  while (groups.length + tail.length < 8) groups.push(0)
  groups.push(...tail)
  return groups
}

const isPort = (text: string): boolean => PORT.test(text) && Number(text) <= 65_535

const parse = (text: string): Parsed | undefined => {
  // How Node reports an IPv4 peer on a dual-stack socket: the common case, read without the IPv6 parser.
  if (text.startsWith("::ffff:")) {
    const value = parseIPv4(text.slice(7))
    if (value !== undefined) return { version: 4, value }
  }
  if (text.startsWith("[")) {
    const close = text.indexOf("]")
    const rest = close === -1 ? undefined : text.slice(close + 1)
    if (rest === undefined || (rest !== "" && !(rest.startsWith(":") && isPort(rest.slice(1))))) return undefined
    const groups = parseIPv6(text.slice(1, close))
    return groups === undefined ? undefined : { version: 6, groups }
  }
  const colon = text.indexOf(":")
  if (colon !== -1 && !text.includes(":", colon + 1)) {
    // One colon: IPv4 with a port, since IPv6 has two at least.
    const value = isPort(text.slice(colon + 1)) ? parseIPv4(text.slice(0, colon)) : undefined
    return value === undefined ? undefined : { version: 4, value }
  }
  if (colon !== -1) {
    const groups = parseIPv6(text)
    return groups === undefined ? undefined : { version: 6, groups }
  }
  const value = parseIPv4(text)
  return value === undefined ? undefined : { version: 4, value }
}

const formatIPv4 = (value: number): string =>
  [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".")

// RFC 5952: lower-case hexadecimal without leading zeros, the longest run of two zero groups or more (the
// first of equal runs) written `::`.
const formatIPv6 = (groups: ReadonlyArray<number>, suffix: string): string => {
  let runStart = -1
  let runLength = 1
  for (let i = 0; i < 8; ) {
    let end = i
    while (end < 8 && groups[end] === 0) end++
    if (end - i > runLength) {
      runStart = i
      runLength = end - i
    }
    i = end === i ? i + 1 : end
  }
  const hex = groups.map((group) => group.toString(16))
  if (runStart === -1) return [hex.join(":"), suffix].join("")
  return [hex.slice(0, runStart).join(":"), "::", hex.slice(runStart + runLength).join(":"), suffix].join("")
}

// `::ffff:0:0/96` holds IPv4 addresses as IPv6 sockets see them (RFC 4291, section 2.5.5.2).
const mappedIPv4 = (groups: ReadonlyArray<number>): number | undefined =>
  groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff
    ? (groups[6] as number) * 0x10000 + (groups[7] as number)
    : undefined

/**
 * The address in its canonical form: the dotted quad for IPv4 and IPv4-mapped IPv6, RFC 5952 for other IPv6;
 * port, brackets and zone dropped. `undefined` when `text` is not an address.
 *
 * @since 0.1.0
 * @category parsing
 */
export const canonical = (text: string): string | undefined => {
  const parsed = parse(text)
  if (parsed === undefined) return undefined
  if (parsed.version === 4) return formatIPv4(parsed.value)
  const mapped = mappedIPv4(parsed.groups)
  return mapped === undefined ? formatIPv6(parsed.groups, "") : formatIPv4(mapped)
}

/**
 * What the address is counted under: its IPv4 address, or its IPv6 /64 prefix (`2001:db8:1:2::/64`).
 * `undefined` when `text` is not an address.
 *
 * @since 0.1.0
 * @category parsing
 */
export const counted = (text: string): string | undefined => {
  const parsed = parse(text)
  if (parsed === undefined) return undefined
  if (parsed.version === 4) return formatIPv4(parsed.value)
  const mapped = mappedIPv4(parsed.groups)
  if (mapped !== undefined) return formatIPv4(mapped)
  const { groups } = parsed
  return formatIPv6(
    [groups[0] as number, groups[1] as number, groups[2] as number, groups[3] as number, 0, 0, 0, 0],
    "/64"
  )
}

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

type RequestHeaders = IncomingHttpHeaders | Readonly<Record<string, string | undefined>>

// `form` with its last answer kept: a connection's requests, and a busy client's connections, come from one
// address, which is then read once (docs/performance.md#small-per-request-costs).
const lastKept = (form: (text: string) => string | undefined): ((text: string) => string | undefined) => {
  let last: string | undefined
  let formed: string | undefined
  return (text) => {
    if (text !== last) {
      formed = form(text)
      last = text
    }
    return formed
  }
}

// The socket's peer, or with `trustProxy` the last `X-Forwarded-For` entry, the one the trusted proxy appended,
// when `form` reads it as an address; each in `form`.
const addressIn = (form: (text: string) => string | undefined) => {
  const formOf = lastKept(form)
  return (headers: RequestHeaders, socketAddress: string | undefined, trustProxy: boolean): string => {
    if (trustProxy) {
      const forwarded = headers["x-forwarded-for"]
      const last =
        forwarded === undefined ? undefined : lastEntry(Array.isArray(forwarded) ? forwarded.join(",") : forwarded)
      const address = last === undefined ? undefined : formOf(last)
      if (address !== undefined) return address
    }
    // Node hands out addresses only; anything else would come from the operating system, not from a client.
    return socketAddress === undefined ? "unknown" : (formOf(socketAddress) ?? socketAddress)
  }
}

/**
 * The address a request came from as its log line names it: the address {@link of} counts the request under
 * (the socket's peer, or with `trustProxy` the last `X-Forwarded-For` entry when it is an address), whole and
 * {@link canonical}, so an IPv6 client is named by its address rather than its /64.
 *
 * @since 0.1.0
 * @category accessors
 */
export const logged: (headers: RequestHeaders, socketAddress: string | undefined, trustProxy: boolean) => string =
  addressIn(canonical)

/**
 * The key the request's address is counted under ({@link counted}): the socket's peer, or with `trustProxy`
 * the last `X-Forwarded-For` entry, the one the trusted proxy appended, which a client cannot forge (the
 * entries before it are whatever the client sent). A last entry that is not an address is refused: the
 * request is counted under the socket's peer, as without the header, so garbage never opens a quota of its
 * own.
 *
 * @since 0.1.0
 * @category accessors
 */
export const of: (headers: RequestHeaders, socketAddress: string | undefined, trustProxy: boolean) => string =
  addressIn(counted)
