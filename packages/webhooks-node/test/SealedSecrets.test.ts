import { createCipheriv, randomBytes } from "node:crypto"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { WebhookSecrets } from "@filedata/core"
import { TempDirectory } from "@filedata/testing"
import { SealedSecrets } from "@filedata/webhooks-node"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

const newKey = () => Redacted.make(new Uint8Array(randomBytes(32)))

const withEnv = (env: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

const roundTrip = Effect.gen(function* () {
  const secrets = yield* WebhookSecrets.WebhookSecrets
  const secret = yield* secrets.generate
  return { secret, sealed: yield* secrets.seal(secret, "wh_a") }
})

describe("SealedSecrets", () => {
  it.effect("a secret is whsec_ and base64 of 32 random bytes", () =>
    Effect.gen(function* () {
      const secrets = SealedSecrets.make(newKey())
      const [a, b] = [Redacted.value(yield* secrets.generate), Redacted.value(yield* secrets.generate)]
      expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(Buffer.from(a.slice("whsec_".length), "base64")).toHaveLength(32)
      expect(a).not.toBe(b)
    })
  )

  it.effect("seals with a fresh nonce each time, opens what it sealed, and the sealed text hides the secret", () =>
    Effect.gen(function* () {
      const secrets = SealedSecrets.make(newKey())
      const secret = yield* secrets.generate
      const [first, second] = [yield* secrets.seal(secret, "wh_a"), yield* secrets.seal(secret, "wh_a")]
      expect(first).toMatch(/^v2\.[\w-]{16}\.[\w-]+$/)
      expect(first).not.toBe(second)
      const keyPart = Redacted.value(secret).slice("whsec_".length)
      for (const sealed of [first, second]) {
        expect(sealed).not.toContain(keyPart)
        expect(sealed).not.toContain(Buffer.from(keyPart, "base64").toString("base64url"))
        expect(Redacted.value(yield* secrets.open(sealed, "wh_a"))).toBe(Redacted.value(secret))
      }
    })
  )

  it.effect("another key, a changed byte or a foreign text: SecretUnreadable", () =>
    Effect.gen(function* () {
      const secrets = SealedSecrets.make(newKey())
      const sealed = yield* secrets.seal(yield* secrets.generate, "wh_a")
      const [version, nonce, data = ""] = sealed.split(".")
      const flipped = `${data.slice(0, 5)}${data[5] === "A" ? "B" : "A"}${data.slice(6)}`
      const refusals = yield* Effect.forEach(
        [
          SealedSecrets.make(newKey()).open(sealed, "wh_a"),
          secrets.open(`${version}.${nonce}.${flipped}`, "wh_a"),
          secrets.open(`v3.${nonce}.${data}`, "wh_a"),
          secrets.open(`${version}.${nonce}`, "wh_a"),
          secrets.open(`${version}.AAAA.${data}`, "wh_a"),
          secrets.open("whsec_plain", "wh_a"),
          secrets.open("", "wh_a")
        ],
        (open) => Effect.flip(open)
      )
      for (const refusal of refusals) expect(refusal).toBeInstanceOf(WebhookSecrets.SecretUnreadable)
      expect(refusals[0]?.reason).toContain("another key")
    })
  )

  it.effect("a sealed secret is bound to its webhook: copied into another webhook's row it does not open", () =>
    Effect.gen(function* () {
      const secrets = SealedSecrets.make(newKey())
      const secret = yield* secrets.generate
      const sealed = yield* secrets.seal(secret, "wh_a")
      expect(Redacted.value(yield* secrets.open(sealed, "wh_a"))).toBe(Redacted.value(secret))
      for (const other of ["wh_b", "wh_a ", "", "wh_"]) {
        const refusal = yield* Effect.flip(secrets.open(sealed, other))
        expect(refusal).toBeInstanceOf(WebhookSecrets.SecretUnreadable)
        expect(refusal.reason).toContain("another webhook")
      }
    })
  )

  it.effect("a v1 secret, sealed before the binding to the webhook's id, still opens for any webhook", () =>
    Effect.gen(function* () {
      const key = newKey()
      // The v1 format as it was sealed: the purpose as associated data, no webhook id.
      const nonce = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", Redacted.value(key), nonce).setAAD(
        Buffer.from("filedata webhook secret v1")
      )
      const data = Buffer.concat([cipher.update("whsec_old", "utf8"), cipher.final(), cipher.getAuthTag()])
      const v1 = `v1.${nonce.toString("base64url")}.${data.toString("base64url")}`
      const secrets = SealedSecrets.make(key)
      expect(Redacted.value(yield* secrets.open(v1, "wh_a"))).toBe("whsec_old")
      // v1 text re-labelled v2 is not taken for a bound secret.
      const relabelled = yield* Effect.flip(secrets.open(`v2${v1.slice(2)}`, "wh_a"))
      expect(relabelled).toBeInstanceOf(WebhookSecrets.SecretUnreadable)
    })
  )

  it.effect("WEBHOOK_ENCRYPTION_KEY is the key: another instance with the same key opens what one sealed", () => {
    const key = randomBytes(32).toString("base64")
    const layer = SealedSecrets.layerConfig.pipe(Layer.provide(withEnv({ WEBHOOK_ENCRYPTION_KEY: key })))
    return Effect.gen(function* () {
      const { secret, sealed } = yield* roundTrip.pipe(Effect.provide(layer))
      const opened = yield* SealedSecrets.make(Redacted.make(new Uint8Array(Buffer.from(key, "base64")))).open(
        sealed,
        "wh_a"
      )
      expect(Redacted.value(opened)).toBe(Redacted.value(secret))
    })
  })

  it.effect("an invalid WEBHOOK_ENCRYPTION_KEY stops the start with a message naming it, never its value", () =>
    Effect.gen(function* () {
      for (const value of [
        "not base64!",
        randomBytes(16).toString("base64"),
        randomBytes(33).toString("base64"),
        " "
      ]) {
        const layer = SealedSecrets.layerConfig.pipe(Layer.provide(withEnv({ WEBHOOK_ENCRYPTION_KEY: value })))
        const error = yield* Effect.flip(Layer.build(layer).pipe(Effect.scoped))
        expect(String(error)).toContain("WEBHOOK_ENCRYPTION_KEY")
        expect(String(error)).toContain("base64 of 32 bytes")
        if (value.trim() !== "") expect(String(error)).not.toContain(value)
      }
    })
  )

  it.scoped("unset, the key is generated once into the key file (0600, directory 0700) and read back after", () =>
    Effect.gen(function* () {
      const dir = yield* TempDirectory.scoped("webhook-key")
      const path = join(dir, "state", "webhook-encryption.key")
      const layer = SealedSecrets.layerConfig.pipe(Layer.provide(withEnv({ WEBHOOK_ENCRYPTION_KEY_FILE: path })))
      const { secret, sealed } = yield* roundTrip.pipe(Effect.provide(layer))
      expect(statSync(path).mode & 0o777).toBe(0o600)
      expect(statSync(join(dir, "state")).mode & 0o777).toBe(0o700)
      const written = readFileSync(path, "utf8")
      expect(Either.isRight(SealedSecrets.parseKey(written))).toBe(true)
      // A second start (a new layer) reads the same key and opens what the first sealed.
      const opened = yield* Effect.flatMap(WebhookSecrets.WebhookSecrets, (secrets) =>
        secrets.open(sealed, "wh_a")
      ).pipe(Effect.provide(layer))
      expect(Redacted.value(opened)).toBe(Redacted.value(secret))
      expect(readFileSync(path, "utf8")).toBe(written)
    })
  )

  it.scoped("a damaged key file or one in an unwritable place stops the start naming the file", () =>
    Effect.gen(function* () {
      const dir = yield* TempDirectory.scoped("webhook-key")
      const damaged = join(dir, "damaged.key")
      writeFileSync(damaged, "short\n")
      const blocker = join(dir, "a-file")
      writeFileSync(blocker, "")
      for (const [path, expected] of [
        [damaged, "base64 of 32 bytes"],
        [join(blocker, "webhook-encryption.key"), "the webhook encryption key: ENOTDIR"]
      ] as const) {
        const error = yield* Effect.flip(SealedSecrets.keyFromFile(path))
        expect(String(error)).toContain("WEBHOOK_ENCRYPTION_KEY_FILE")
        expect(String(error)).toContain(expected)
        expect(String(error)).toContain(path)
      }
    })
  )
})
