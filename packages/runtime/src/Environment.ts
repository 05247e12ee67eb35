/**
 * What the environment says besides the configuration's values: the variables that look like the service's
 * own and are not (a typo is otherwise ignored in silence), and the settings in effect, as one start-up line.
 *
 * @since 0.2.0
 */
import type * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as HashSet from "effect/HashSet"
import type * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as ServiceConfig from "./ServiceConfig.js"

/**
 * The variables a `Config` reads, found by reading it from a provider that has none and notes each name asked
 * for: taken from the definitions themselves, so a variable added to them is known without another list.
 *
 * @since 0.2.0
 * @category constructors
 */
export const variablesOf = (config: Config.Config<unknown>): ReadonlyArray<string> => {
  const asked = new Set<string>()
  const provider = ConfigProvider.fromFlat(
    ConfigProvider.makeFlat({
      load: (path) => {
        asked.add(path.join("_"))
        return Effect.fail(ConfigError.MissingData([...path], "noted"))
      },
      enumerateChildren: () => Effect.succeed(HashSet.empty()),
      patch: ConfigProvider.fromMap(new Map()).flattened.patch
    })
  )
  Effect.runSync(Effect.either(Effect.withConfigProvider(config, provider)))
  return [...asked].sort()
}

/**
 * Every variable `ServiceConfig.config` reads, the README's configuration table without its CLI-only rows.
 *
 * @since 0.2.0
 * @category constants
 */
export const knownVariables: ReadonlyArray<string> = variablesOf(ServiceConfig.config)

// Read by others under the service's prefixes: the proxy variable of HTTP clients, and the OpenTelemetry
// SDK's own (README: "Other OTEL_* variables").
const readElsewhere =
  /^(HTTP_PROXY|OTEL_EXPORTER_OTLP_(TRACES_|METRICS_|LOGS_)?(HEADERS|TIMEOUT|COMPRESSION|CERTIFICATE|CLIENT_KEY|CLIENT_CERTIFICATE|ENDPOINT|PROTOCOL)|OTEL_(TRACES_SAMPLER|TRACES_SAMPLER_ARG|PROPAGATORS|LOG_LEVEL|METRICS_EXPORTER|LOGS_EXPORTER)|OTEL_(BSP|BLRP|METRIC|ATTRIBUTE|SPAN|EVENT|LINK)_[A-Z_]+)$/

/**
 * The first words the service's variables share (`RATE_`, `HTTP_`, `DATABASE_`, `METRICS_`, `WEBHOOK_`, ...):
 * any other variable starting with one is taken for a misspelling. `OTEL_` is left out, as the OpenTelemetry
 * SDK reads many more; its variables are checked by their distance to the ones the service reads.
 *
 * @since 0.2.0
 * @category constants
 */
export const families = (known: ReadonlyArray<string>): ReadonlyArray<string> => {
  const counts = new Map<string, number>()
  for (const name of known) {
    const underscore = name.indexOf("_")
    if (underscore > 0) counts.set(name.slice(0, underscore + 1), (counts.get(name.slice(0, underscore + 1)) ?? 0) + 1)
  }
  return [...counts].filter(([prefix, count]) => count > 1 && prefix !== "OTEL_").map(([prefix]) => prefix)
}

/**
 * The edit distance (Levenshtein) from `a` to `b`, or `bound + 1` once it must be over `bound`: a row's least
 * entry only grows (pnpm's environment has a hundred variables, each compared with the known names at every
 * start). The CLI measures a mistyped command with it too.
 *
 * @since 0.2.0
 * @category utils
 */
export const distance = (a: string, b: string, bound = Number.POSITIVE_INFINITY): number => {
  if (Math.abs(a.length - b.length) > bound) return bound + 1
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    let least = i
    for (let j = 1; j <= b.length; j++) {
      const d = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      )
      current[j] = d
      if (d < least) least = d
    }
    if (least > bound) return bound + 1
    previous = current
  }
  return previous[b.length] ?? 0
}

/**
 * A variable of the environment the service does not read though it looks like one it does, and the known
 * name nearest to it.
 *
 * @since 0.2.0
 * @category models
 */
export interface Misspelling {
  readonly variable: string
  readonly nearest: string
}

/**
 * The variables of `env` that look like the service's and are not: unknown ones under a prefix the service's
 * share, and any within a typo of a known name (one edit in five characters, so `HOME` is not `HOST`), each
 * with the nearest known name.
 *
 * @since 0.2.0
 * @category constructors
 */
export const misspellings = (
  env: Readonly<Record<string, string | undefined>>,
  known: ReadonlyArray<string> = knownVariables
): ReadonlyArray<Misspelling> => {
  const prefixes = families(known)
  const found: Array<Misspelling> = []
  for (const variable of Object.keys(env).sort()) {
    if (known.includes(variable) || readElsewhere.test(variable)) continue
    const family = prefixes.some((prefix) => variable.startsWith(prefix))
    // A typo is within max(1, length / 5) edits of some name, so the search outside a family looks no further:
    // most variables are passed over in a few characters.
    let nearest = ""
    let best = family ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor(variable.length / 5)) + 1
    for (const name of known) {
      const d = distance(variable, name, best - 1)
      if (d < best) [nearest, best] = [name, d]
    }
    const typo = best <= Math.max(1, Math.floor(Math.min(variable.length, nearest.length) / 5))
    if (typo || family) found.push({ variable, nearest })
  }
  return found
}

type Setting = string | number | boolean

const isLogLevel = (value: object): value is LogLevel.LogLevel =>
  "label" in value && "ordinal" in value && "syslog" in value

// A secret is never printed; a URL is, without its password (`redis://***@cache:6379`).
const shown = (value: Redacted.Redacted<unknown>): string => {
  const text = Redacted.value(value)
  return typeof text === "string" && /^[a-z][a-z0-9+.-]*:\/\//i.test(text)
    ? ServiceConfig.redactUrl(text)
    : "<redacted>"
}

const flatten = (value: unknown, key: string, into: Record<string, Setting>): void => {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    into[key] = value
  } else if (Redacted.isRedacted(value)) {
    into[key] = shown(value)
  } else if (Option.isOption(value)) {
    if (Option.isSome(value)) flatten(value.value, key, into)
    else into[key] = "unset"
  } else if (typeof value === "object" && value !== null) {
    if (isLogLevel(value)) {
      into[key] = value.label.toLowerCase()
      return
    }
    for (const [name, inner] of Object.entries(value)) {
      // The kind of a tagged value shows in the names of its fields (`storage.database.filename`).
      if (name !== "_tag") flatten(inner, key === "" ? name : `${key}.${name}`, into)
    }
  }
}

/**
 * The settings in effect, by their path in `ServiceConfig` (`rateLimiting.policy.apiKey.limit`): every value,
 * secrets as `<redacted>` and URLs without their password.
 *
 * @since 0.2.0
 * @category formatting
 */
export const settings = (config: ServiceConfig.ServiceConfig): Readonly<Record<string, Setting>> => {
  const into: Record<string, Setting> = {}
  flatten(config, "", into)
  return into
}

/**
 * Logs a warning for each misspelled variable, then one `settings` line with the settings in effect.
 *
 * @since 0.2.0
 * @category logging
 */
export const report = (
  config: ServiceConfig.ServiceConfig,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<void> =>
  Effect.zipRight(
    Effect.forEach(
      misspellings(env),
      ({ nearest, variable }) =>
        Effect.logWarning(`${variable} is not a variable of this service and is ignored: did you mean ${nearest}?`),
      { discard: true }
    ),
    // The fields in their order, as a request line's (`Logging.plainLine`), not as unordered annotations.
    Effect.logInfo("settings", settings(config))
  )
