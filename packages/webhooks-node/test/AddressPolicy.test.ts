import { describe, expect, it } from "@effect/vitest"
import { AddressPolicy } from "@filedata/webhooks-node"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"

const classOf = (address: string) =>
  Option.match(AddressPolicy.classify(address), {
    onNone: () => "global",
    onSome: ({ embedding, kind }) =>
      Option.match(embedding, { onNone: () => kind, onSome: (form) => `${kind} ${form}` })
  })

// Each IPv4 class as its ranges (network as a number, prefix length): the property tests draw addresses inside
// them, and the same addresses wrapped in every IPv6 form that carries an IPv4 address.
const ipv4Ranges: ReadonlyArray<readonly [AddressPolicy.AddressClass, string, number]> = [
  ["unspecified", "0.0.0.0", 8],
  ["loopback", "127.0.0.0", 8],
  ["private", "10.0.0.0", 8],
  ["private", "172.16.0.0", 12],
  ["private", "192.168.0.0", 16],
  ["carrier-grade NAT", "100.64.0.0", 10],
  ["link-local", "169.254.0.0", 16],
  ["multicast", "224.0.0.0", 4],
  ["reserved", "240.0.0.0", 4],
  ["reserved", "192.0.0.0", 24],
  ["documentation", "192.0.2.0", 24],
  ["documentation", "198.51.100.0", 24],
  ["documentation", "203.0.113.0", 24],
  ["benchmarking", "198.18.0.0", 15]
]

const toNumber = (dotted: string) => dotted.split(".").reduce((n, part) => n * 256 + Number(part), 0)
const toDotted = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".")
const hex = (n: number) => [Math.floor(n / 65536), n % 65536].map((group) => group.toString(16))

const inRange = FastCheck.constantFrom(...ipv4Ranges).chain(([kind, network, prefix]) =>
  FastCheck.integer({ min: 0, max: 2 ** (32 - prefix) - 1 }).map((offset) => ({
    kind,
    address: toDotted(toNumber(network) + offset)
  }))
)

const wrapped = (address: string) => {
  const [high, low] = hex(toNumber(address))
  return {
    "IPv4-mapped": [`::ffff:${address}`, `::ffff:${high}:${low}`],
    NAT64: [`64:ff9b::${address}`, `64:ff9b::${high}:${low}`],
    "6to4": [`2002:${high}:${low}::1`]
  }
}

// IPv6 classes that hold no other class, as 128-bit numbers: addresses are drawn inside each.
const ipv6Ranges: ReadonlyArray<readonly [AddressPolicy.AddressClass, bigint, number]> = [
  ["link-local", 0xfe80n << 112n, 10],
  ["unique-local", 0xfc00n << 112n, 7],
  ["multicast", 0xff00n << 112n, 8],
  ["documentation", 0x20010db8n << 96n, 32],
  ["documentation", 0x3fffn << 112n, 20],
  ["benchmarking", 0x20010002n << 96n, 48],
  ["reserved", 0x4000n << 112n, 2],
  ["reserved", 0xfec0n << 112n, 10]
]
const ipv6Text = (n: bigint) =>
  Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(":")
const random128 = FastCheck.bigUintN(128)
const inside = (network: bigint, prefix: number, random: bigint) => {
  const host = (1n << BigInt(128 - prefix)) - 1n
  return (network & ~host) | (random & host)
}

describe("AddressPolicy", () => {
  it.prop(
    "every address of an IPv6 class is refused as that class",
    [FastCheck.constantFrom(...ipv6Ranges), random128],
    ([[kind, network, prefix], random]) => {
      expect(classOf(ipv6Text(inside(network, prefix, random)))).toBe(kind)
    }
  )

  it.prop("global unicast IPv6 (2000::/3) passes, but for the ranges carved out of it", [random128], ([random]) => {
    const address = inside(0x2000n << 112n, 3, random)
    const top32 = address >> 96n
    const carved =
      top32 >> 9n === 0x2001n << 7n || // 2001::/23
      top32 === 0x20010db8n ||
      address >> 112n === 0x2002n || // 6to4: judged by its IPv4 address
      address >> 108n === 0x3fff0n // 3fff::/20
    if (!carved) expect(classOf(ipv6Text(address))).toBe("global")
  })

  it.prop("every address of an IPv4 class is refused as that class", [inRange], ([{ address, kind }]) => {
    expect(classOf(address)).toBe(kind)
  })

  it.prop(
    "the same address inside IPv4-mapped, NAT64 and 6to4 forms is refused as that class in that form",
    [inRange],
    ([{ address, kind }]) => {
      for (const [form, addresses] of Object.entries(wrapped(address))) {
        for (const ipv6 of addresses) expect(classOf(ipv6)).toBe(`${kind} ${form}`)
      }
    }
  )

  it.prop(
    "a global IPv4 address passes bare and wrapped",
    [FastCheck.integer({ min: 0, max: 2 ** 32 - 1 }).map(toDotted)],
    ([address]) => {
      const inClass = ipv4Ranges.some(
        ([, network, prefix]) =>
          Math.floor(toNumber(address) / 2 ** (32 - prefix)) === Math.floor(toNumber(network) / 2 ** (32 - prefix))
      )
      // 192.88.99.0/24, the deprecated 6to4 relay anycast, is reserved too.
      if (inClass || address.startsWith("192.88.99.")) {
        expect(classOf(address)).not.toBe("global")
      } else {
        expect(classOf(address)).toBe("global")
        for (const addresses of Object.values(wrapped(address))) {
          for (const ipv6 of addresses) expect(classOf(ipv6)).toBe("global")
        }
      }
    }
  )

  it("the IPv4 edges: broadcast, the 6to4 relay, the ends of each private range", () => {
    expect(
      ["255.255.255.255", "192.88.99.1", "172.15.255.255", "172.16.0.0", "172.31.255.255", "172.32.0.0"].map(classOf)
    ).toEqual(["reserved", "reserved", "global", "private", "private", "global"])
  })

  it("IPv6 classes", () => {
    expect(
      Object.fromEntries(
        [
          "::",
          "::1",
          "0:0:0:0:0:0:0:1",
          "fe80::1",
          "febf:ffff::1",
          "fe80::1%eth0",
          "fc00::1",
          "fd12:3456:789a::1",
          "ff02::1",
          "ff0e::1",
          "2001:db8::1",
          "3fff:0fff::1",
          "2001:2::1",
          "2001::1",
          "2001:1ff::1",
          "fec0::1",
          "100::1",
          "::1.2.3.4",
          "64:ff9b:1::1",
          "4000::1",
          "[::1]"
        ].map((address) => [address, classOf(address)])
      )
    ).toEqual({
      "::": "unspecified",
      "::1": "loopback",
      "0:0:0:0:0:0:0:1": "loopback",
      "fe80::1": "link-local",
      "febf:ffff::1": "link-local",
      "fe80::1%eth0": "link-local",
      "fc00::1": "unique-local",
      "fd12:3456:789a::1": "unique-local",
      "ff02::1": "multicast",
      "ff0e::1": "multicast",
      "2001:db8::1": "documentation",
      "3fff:0fff::1": "documentation",
      "2001:2::1": "benchmarking",
      "2001::1": "reserved",
      "2001:1ff::1": "reserved",
      "fec0::1": "reserved",
      "100::1": "reserved",
      "::1.2.3.4": "reserved",
      "64:ff9b:1::1": "reserved",
      "4000::1": "reserved",
      "[::1]": "loopback"
    })
  })

  it("global addresses pass, text that is no address does not", () => {
    for (const address of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001::200e", "2001:4860::8888"]) {
      expect(AddressPolicy.isGlobal(address)).toBe(true)
    }
    for (const text of ["", "localhost", "example.com", "256.0.0.1", "1.2.3", "::ffff:1.2.3.4.5"]) {
      expect(classOf(text)).toBe("invalid")
    }
  })

  it("describes a refusal by its class, never by its address", () => {
    const described = (address: string) => Option.map(AddressPolicy.classify(address), AddressPolicy.describe)
    expect(described("127.0.0.1")).toEqual(Option.some("a loopback address"))
    expect(described("10.1.2.3")).toEqual(Option.some("a private (RFC 1918) address"))
    expect(described("::")).toEqual(Option.some("an unspecified address"))
    expect(described("::ffff:169.254.169.254")).toEqual(Option.some("a link-local address in IPv4-mapped form"))
    expect(described("8.8.8.8")).toEqual(Option.none())
  })
})
