import * as Option from "effect/Option"

/** The eight 16-bit groups of an IPv6 address already known to be valid (`net.isIP(text) === 6`, no zone). */
export const groups = (address: string): ReadonlyArray<number> => {
  let text = address
  const lastColon = text.lastIndexOf(":")
  const tail = text.slice(lastColon + 1)
  if (tail.includes(".")) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split(".").map(Number)
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((group) => Number.parseInt(group, 16)))
  const gap = text.indexOf("::")
  if (gap === -1) return parse(text)
  const head = parse(text.slice(0, gap))
  const rest = parse(text.slice(gap + 2))
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest]
}

const dotted = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`

/**
 * The IPv4 address inside an IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address:
 * a connection to one of those reaches that IPv4 address, so it is judged as that address.
 */
export const embeddedIpv4 = (
  address: string
): Option.Option<{ readonly ipv4: string; readonly form: "IPv4-mapped" | "NAT64" | "6to4" }> => {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups(address)
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) {
    return Option.some({ ipv4: dotted(g6, g7), form: "IPv4-mapped" })
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return Option.some({ ipv4: dotted(g6, g7), form: "NAT64" })
  }
  if (g0 === 0x2002) return Option.some({ ipv4: dotted(g1, g2), form: "6to4" })
  return Option.none()
}
