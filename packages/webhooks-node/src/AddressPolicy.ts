/**
 * Which IP addresses a webhook may be delivered to: every global one, and none of the address classes an
 * attacker would aim a server-side request at (loopback, private, link-local, ... and the same IPv4 addresses
 * wrapped in IPv4-mapped, NAT64 and 6to4 IPv6 forms). Each class is a `net.BlockList`.
 *
 * @since 0.2.0
 */
import { BlockList, isIP } from "node:net"
import * as Option from "effect/Option"
import { embeddedIpv4 } from "./internal/ipv6.js"

/**
 * A class of non-global addresses. `reserved` holds what IANA reserves or has not allocated for global unicast
 * (240.0.0.0/4 with the broadcast address, 192.0.0.0/24, IPv6 outside 2000::/3, 2001::/23, ...); `invalid` is
 * text that is no IP address at all.
 *
 * @since 0.2.0
 * @category models
 */
export type AddressClass =
  | "unspecified"
  | "loopback"
  | "private"
  | "carrier-grade NAT"
  | "link-local"
  | "unique-local"
  | "multicast"
  | "reserved"
  | "documentation"
  | "benchmarking"
  | "invalid"

/**
 * The IPv6 forms that carry an IPv4 address, which is judged in their place.
 *
 * @since 0.2.0
 * @category models
 */
export type Embedding = "IPv4-mapped" | "NAT64" | "6to4"

/**
 * Why an address is refused: its class, and the IPv6 form it was wrapped in, if any.
 *
 * @since 0.2.0
 * @category models
 */
export interface NonGlobal {
  readonly kind: AddressClass
  readonly embedding: Option.Option<Embedding>
}

// Each class's subnets in CIDR notation, as the IANA registries list them.
type Classes = ReadonlyArray<readonly [AddressClass, ReadonlyArray<`${string}/${number}`>]>

const ipv4: Classes = [
  ["unspecified", ["0.0.0.0/8"]],
  ["loopback", ["127.0.0.0/8"]],
  ["private", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]],
  ["carrier-grade NAT", ["100.64.0.0/10"]],
  ["link-local", ["169.254.0.0/16"]],
  ["multicast", ["224.0.0.0/4"]],
  ["documentation", ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]],
  ["benchmarking", ["198.18.0.0/15"]],
  ["reserved", ["240.0.0.0/4", "192.0.0.0/24", "192.88.99.0/24"]]
]

// Global unicast is 2000::/3; the classes before `reserved` come first, so what is left outside 2000::/3 (site
// local fec0::/10, discard 100::/64, IPv4-compatible ::/96, local-use NAT64 64:ff9b:1::/48, ...) is reserved.
const ipv6: Classes = [
  ["unspecified", ["::/128"]],
  ["loopback", ["::1/128"]],
  ["link-local", ["fe80::/10"]],
  ["unique-local", ["fc00::/7"]],
  ["multicast", ["ff00::/8"]],
  ["documentation", ["2001:db8::/32", "3fff::/20"]],
  ["benchmarking", ["2001:2::/48"]],
  ["reserved", ["2001::/23", "::/3", "4000::/2", "8000::/1"]]
]

const lists = (family: "ipv4" | "ipv6", classes: Classes) =>
  classes.map(([kind, subnets]) => {
    const list = new BlockList()
    for (const subnet of subnets) {
      const [network = "", prefix] = subnet.split("/")
      list.addSubnet(network, Number(prefix), family)
    }
    return [kind, list] as const
  })

const ipv4Lists = lists("ipv4", ipv4)
const ipv6Lists = lists("ipv6", ipv6)

const firstMatch = (
  address: string,
  family: "ipv4" | "ipv6",
  classes: ReadonlyArray<readonly [AddressClass, BlockList]>
): Option.Option<AddressClass> => {
  for (const [kind, list] of classes) if (list.check(address, family)) return Option.some(kind)
  return Option.none()
}

/**
 * The class of a non-global address, or `None` for a global one. Text that is no IP address is `invalid`,
 * so a caller that forgets to resolve a name refuses it rather than lets it through. An IPv6 zone (`%eth0`)
 * is ignored: the address's class does not depend on it.
 *
 * @since 0.2.0
 * @category classifying
 */
export const classify = (address: string): Option.Option<NonGlobal> => {
  const text = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  const bare = text.split("%")[0] ?? text
  const family = isIP(bare)
  if (family === 4) {
    return Option.map(firstMatch(bare, "ipv4", ipv4Lists), (kind) => ({ kind, embedding: Option.none() }))
  }
  if (family !== 6) return Option.some({ kind: "invalid", embedding: Option.none() })
  const embedded = embeddedIpv4(bare)
  if (Option.isSome(embedded)) {
    const { ipv4: inner, form } = embedded.value
    return Option.map(firstMatch(inner, "ipv4", ipv4Lists), (kind) => ({ kind, embedding: Option.some(form) }))
  }
  return Option.map(firstMatch(bare, "ipv6", ipv6Lists), (kind) => ({ kind, embedding: Option.none() }))
}

/**
 * Whether a webhook may be delivered to this address while private networks are not allowed.
 *
 * @since 0.2.0
 * @category classifying
 */
export const isGlobal = (address: string): boolean => Option.isNone(classify(address))

/**
 * A refusal in words safe to show the webhook's owner: the class, never the address a name resolved to (which
 * would tell the owner about the operator's internal DNS).
 *
 * @since 0.2.0
 * @category formatting
 */
export const describe = ({ kind, embedding }: NonGlobal): string => {
  const name =
    kind === "invalid"
      ? "no IP address"
      : kind === "private"
        ? "a private (RFC 1918) address"
        : kind === "unspecified" || kind === "unique-local"
          ? `an ${kind} address`
          : `a ${kind} address`
  return Option.match(embedding, { onNone: () => name, onSome: (form) => `${name} in ${form} form` })
}
