import { describe, expect, it } from "@effect/vitest"
import { Environment, ServiceConfig } from "@filedata/runtime"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Redacted from "effect/Redacted"
import { notingProvider, readmeRows } from "./utils/ConfigDocs.js"

describe("Environment.knownVariables", () => {
  it.effect("are the variables ServiceConfig.config reads, the README's table without its CLI-only rows", () =>
    Effect.gen(function* () {
      const { asked, provider } = notingProvider({})
      yield* Effect.withConfigProvider(ServiceConfig.config, provider)
      expect(Environment.knownVariables).toEqual([...asked].sort())
      expect(Environment.knownVariables).toEqual(
        readmeRows()
          .filter((row) => !row.cliOnly)
          .map((row) => row.variable)
          .sort()
      )
    })
  )
})

describe("Environment.misspellings", () => {
  const known = Environment.knownVariables

  it("names a typo of a known variable, and an unknown one under the service's prefixes, with the nearest", () => {
    expect(
      Environment.misspellings({
        RATE_LIMT_MAX: "5",
        LOGLEVEL: "debug",
        DATABASE_PASSWORD: "x",
        METRICS_PATH: "/m",
        OTEL_EXPORTER_OTLP_ENDPIONT: "http://x",
        TRUST_PROXYS: "1"
      })
    ).toEqual([
      { variable: "DATABASE_PASSWORD", nearest: "DATABASE_POOL_MAX" },
      { variable: "LOGLEVEL", nearest: "LOG_LEVEL" },
      { variable: "METRICS_PATH", nearest: "METRICS_PORT" },
      { variable: "OTEL_EXPORTER_OTLP_ENDPIONT", nearest: "OTEL_EXPORTER_OTLP_ENDPOINT" },
      { variable: "RATE_LIMT_MAX", nearest: "RATE_LIMIT_MAX" },
      { variable: "TRUST_PROXYS", nearest: "TRUST_PROXY" }
    ])
  })

  it("leaves alone the known ones, a shell's own, and those other readers take (proxy, OpenTelemetry SDK)", () => {
    const env = Object.fromEntries(
      [
        ...known,
        "HOME",
        "HOSTNAME",
        "PATH",
        "PWD",
        "NODE_ENV",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_COLOR",
        "INIT_CWD",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_BSP_SCHEDULE_DELAY",
        "OTEL_TRACES_SAMPLER"
      ].map((name) => [name, "x"])
    )
    expect(Environment.misspellings(env)).toEqual([])
  })

  // The oracle: every known name's edit distance, the first nearest kept, as before names were skipped by length.
  const levenshtein = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j)
    for (let i = 1; i <= a.length; i++) {
      let diagonal = row[0] ?? 0
      row[0] = i
      for (let j = 1; j <= b.length; j++) {
        const above = row[j] ?? 0
        row[j] = Math.min(above + 1, (row[j - 1] ?? 0) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
        diagonal = above
      }
    }
    return row[b.length] ?? 0
  }
  const nearestOf = (variable: string) =>
    known.reduce((best, name) => (levenshtein(variable, name) < levenshtein(variable, best) ? name : best))
  const edited = FastCheck.tuple(
    FastCheck.constantFrom(...known),
    FastCheck.array(FastCheck.tuple(FastCheck.nat(40), FastCheck.constantFrom("", "_", "A", "E", "S", "X")), {
      maxLength: 3
    })
  ).map(([name, edits]) =>
    edits.reduce((text, [at, letter]) => {
      const i = at % (text.length + 1)
      return text.slice(0, i) + letter + text.slice(i + (letter === "" || at % 2 === 0 ? 1 : 0))
    }, name)
  )

  it.prop("names the nearest known variable, as comparing with every known name does", [edited], ([variable]) => {
    const found = Environment.misspellings({ [variable]: "x" })
    for (const { nearest } of found)
      expect(levenshtein(variable, nearest)).toBe(levenshtein(variable, nearestOf(variable)))
    // Reported exactly when within a typo of the nearest name or under one of the service's prefixes.
    const nearest = nearestOf(variable)
    const typo =
      levenshtein(variable, nearest) <= Math.max(1, Math.floor(Math.min(variable.length, nearest.length) / 5))
    const family = Environment.families(known).some((prefix) => variable.startsWith(prefix))
    if (known.includes(variable) || (!typo && !family)) expect(found).toEqual([])
    else if (!/^(OTEL_|HTTP_PROXY)/.test(variable)) expect(found.map((entry) => entry.variable)).toEqual([variable])
  })

  it("takes a variable added to the definitions as known, and its prefix as the service's", () => {
    const withWebhooks = [...known, "WEBHOOK_TIMEOUT_MS", "WEBHOOK_DELIVERY"]
    expect(Environment.families(withWebhooks)).toContain("WEBHOOK_")
    expect(Environment.misspellings({ WEBHOOK_TIMEOUT_MS: "1", WEBHOOK_TIMEOUT: "1" }, withWebhooks)).toEqual([
      { variable: "WEBHOOK_TIMEOUT", nearest: "WEBHOOK_TIMEOUT_MS" }
    ])
  })
})

describe("Environment.settings", () => {
  it.effect("shows every setting by its path, URLs without their password and other secrets not at all", () =>
    Effect.gen(function* () {
      const { provider } = notingProvider({
        DATABASE_URL: "postgres://filedata:s3cret@db:5432/filedata",
        RATE_LIMIT_MAX: "5"
      })
      const config = yield* Effect.withConfigProvider(ServiceConfig.config, provider)
      const shown = Environment.settings(config)
      expect(shown).toMatchObject({
        port: 3000,
        logLevel: "info",
        "storage.database.url": "postgres://***@db:5432/filedata",
        "rateLimiting.policy.apiKey.limit": 5,
        "rateLimiting.redisUrl": "unset"
      })
      expect(JSON.stringify(shown)).not.toContain("s3cret")
      const withKey = { ...config, key: Redacted.make("0123456789abcdef") } as unknown as ServiceConfig.ServiceConfig
      expect(Environment.settings(withKey)).toMatchObject({ key: "<redacted>" })
    })
  )
})
