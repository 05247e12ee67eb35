/**
 * The readers every configuration section is built of: one Effect `Config` primitive per kind of value, each
 * refusal naming the variable (through the config's path) and saying what is accepted, in Effect's words
 * ("Expected ... but received ...").
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

/**
 * A URL as it may be printed: its user information, which may hold a password, replaced by `***`. Text that
 * does not parse is treated the same way, so a malformed URL cannot leak its password either.
 *
 * @internal
 */
export const redactUrl = (text: string): string => {
  const scheme = text.indexOf(":")
  const authority = text.startsWith("//", scheme + 1) ? scheme + 3 : scheme + 1
  const at = text.lastIndexOf("@")
  return scheme > 0 && at >= authority ? `${text.slice(0, authority)}***${text.slice(at)}` : text
}

/** @internal */
export const quoted = (text: string): string => JSON.stringify(text)

/**
 * A variable read by `parse`, whose refusals name the variable through the config's path as Effect's own
 * primitives do; `parse` says what was expected.
 *
 * @internal
 */
export const variable = <A>(name: string, parse: (text: string) => Either.Either<A, string>): Config.Config<A> =>
  Config.nested(
    Config.primitive(name, (text) => Either.mapLeft(parse(text), (message) => ConfigError.InvalidData([], message))),
    name
  )

/**
 * A whole number in `[min, max]`. `Config.integer` reads an empty or blank value as 0 and accepts `1e3`, so a
 * blank `PORT` would pick a random port; a whole number here is digits only.
 *
 * @internal
 */
export const wholeNumberIn = (name: string, min: number, max: number): Config.Config<number> =>
  variable(name, (text) => {
    const value = Number(text)
    return /^\d+$/.test(text.trim()) && Number.isSafeInteger(value) && value >= min && value <= max
      ? Either.right(value)
      : Either.left(`Expected a whole number from ${min} to ${max} but received ${quoted(text)}`)
  })

/** @internal */
export const wholeNumber = (name: string, fallback: number, min: number, max: number): Config.Config<number> =>
  wholeNumberIn(name, min, max).pipe(Config.withDefault(fallback))

/**
 * A name among `names`, read as earlier releases read these variables: whatever its case, surrounding spaces
 * ignored (`LOG_LEVEL=INFO` has always started the service).
 *
 * @internal
 */
export const oneOf = <const Name extends string>(name: string, names: ReadonlyArray<Name>): Config.Config<Name> =>
  variable(name, (text) => {
    const value = text.trim().toLowerCase()
    return (names as ReadonlyArray<string>).includes(value)
      ? Either.right(value as Name)
      : Either.left(`Expected one of ${names.join(", ")} but received ${quoted(text)}`)
  })

// Effect's `Config.boolean` takes these spellings but says only "Expected a boolean value": the refusal lists them.
const flagSpellings = { true: true, yes: true, on: true, "1": true, false: false, no: false, off: false, "0": false }

/** @internal */
export const flag = (name: string): Config.Config<boolean> =>
  variable(name, (text) => {
    const value = text.trim().toLowerCase()
    return Object.hasOwn(flagSpellings, value)
      ? Either.right(flagSpellings[value as keyof typeof flagSpellings])
      : Either.left(`Expected true, false, 1, 0, yes, no, on or off but received ${quoted(text)}`)
  })

/**
 * A host name or address to listen on (`HOST`, `METRICS_HOST`), surrounding spaces ignored.
 *
 * @internal
 */
export const hostName = (name: string, fallback: string): Config.Config<string> =>
  variable(name, (text) =>
    text.trim() === ""
      ? Either.left(`Expected a host name or address but received ${quoted(text)}`)
      : Either.right(text.trim())
  ).pipe(Config.withDefault(fallback))

/**
 * A variable that may be left out. Unset and empty mean the same: a deployment template may pass it empty.
 *
 * @internal
 */
export const optional = <A>(
  name: string,
  parse: (text: string) => Either.Either<A, string>
): Config.Config<Option.Option<A>> =>
  variable(name, (text) =>
    text.trim() === "" ? Either.right(Option.none()) : Either.map(parse(text), Option.some)
  ).pipe(Config.withDefault(Option.none()))
