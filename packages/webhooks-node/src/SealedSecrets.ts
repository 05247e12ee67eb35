/**
 * The `WebhookSecrets` port on `node:crypto`: a secret is 32 random bytes as `whsec_` + base64, and what
 * storage keeps is that secret sealed with AES-256-GCM under a key that is never in the database: given as
 * `WEBHOOK_ENCRYPTION_KEY`, or generated once into a file of its own (mode 0600).
 *
 * Sealed text is `v2.<nonce>.<ciphertext and tag>` (base64url, a fresh 12-byte nonce per seal), authenticated
 * with the webhook's id as associated data: copied into another webhook's row, it does not open. `v1` text
 * (sealed before, bound to no id) still opens, and is sealed anew as `v2` at the next rotation.
 *
 * @since 0.2.0
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { WebhookSecrets } from "@filedata/core"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

const KEY_BYTES = 32
const NONCE_BYTES = 12
const TAG_BYTES = 16
const SECRET_BYTES = 32
// Binds a sealed value to its purpose (and, from v2, to its webhook): a ciphertext of this key made for
// anything else does not open here.
const associatedData = {
  v1: () => Buffer.from("filedata webhook secret v1"),
  v2: (webhookId: string) => Buffer.from(`filedata webhook secret v2\u0000${webhookId}`, "utf8")
} as const

/**
 * Where the generated key is kept when `WEBHOOK_ENCRYPTION_KEY` is unset and `WEBHOOK_ENCRYPTION_KEY_FILE`
 * names no other file: beside the default SQLite database (`./data/filedata.db`).
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultKeyFile = "./data/webhook-encryption.key"

/**
 * Reads a key: base64 of exactly 32 bytes; `Left` says what was expected, never with the text.
 *
 * @since 0.2.0
 * @category parsers
 */
export const parseKey = (text: string): Either.Either<Redacted.Redacted<Uint8Array>, string> => {
  const trimmed = text.trim()
  const bytes = Buffer.from(trimmed, "base64")
  return /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) && bytes.length === KEY_BYTES
    ? Either.right(Redacted.make(new Uint8Array(bytes)))
    : Either.left(`Expected base64 of ${KEY_BYTES} bytes (e.g. the output of: openssl rand -base64 32)`)
}

/**
 * The port given a 32-byte key.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (key: Redacted.Redacted<Uint8Array>): WebhookSecrets.WebhookSecretsShape => {
  const keyBytes = Redacted.value(key)
  if (keyBytes.length !== KEY_BYTES) throw new RangeError(`the key must be ${KEY_BYTES} bytes`)
  const seal = (secret: Redacted.Redacted<string>, webhookId: string) =>
    Effect.sync(() => {
      const nonce = randomBytes(NONCE_BYTES)
      const cipher = createCipheriv("aes-256-gcm", keyBytes, nonce).setAAD(associatedData.v2(webhookId))
      const sealed = Buffer.concat([cipher.update(Redacted.value(secret), "utf8"), cipher.final(), cipher.getAuthTag()])
      return `v2.${nonce.toString("base64url")}.${sealed.toString("base64url")}`
    })
  const open = (sealed: string, webhookId: string) =>
    Effect.suspend(() => {
      const [version, nonceText, dataText, ...rest] = sealed.split(".")
      const known = version === "v1" || version === "v2"
      if (!known || nonceText === undefined || dataText === undefined || rest.length > 0) {
        return Effect.fail(new WebhookSecrets.SecretUnreadable({ reason: "not a sealed secret of a known format" }))
      }
      const nonce = Buffer.from(nonceText, "base64url")
      const data = Buffer.from(dataText, "base64url")
      if (nonce.length !== NONCE_BYTES || data.length < TAG_BYTES) {
        return Effect.fail(new WebhookSecrets.SecretUnreadable({ reason: "a damaged sealed secret" }))
      }
      return Effect.try({
        try: () => {
          const aad = version === "v1" ? associatedData.v1() : associatedData.v2(webhookId)
          const decipher = createDecipheriv("aes-256-gcm", keyBytes, nonce).setAAD(aad)
          decipher.setAuthTag(data.subarray(data.length - TAG_BYTES))
          const plain = Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()])
          return Redacted.make(plain.toString("utf8"))
        },
        catch: () =>
          new WebhookSecrets.SecretUnreadable({
            reason:
              "the sealed secret does not open with this key for this webhook: another key, another webhook's, or a damaged value"
          })
      })
    })
  return {
    generate: Effect.sync(() => Redacted.make(`whsec_${randomBytes(SECRET_BYTES).toString("base64")}`)),
    seal,
    open
  }
}

/**
 * @since 0.2.0
 * @category layers
 */
export const layer = (key: Redacted.Redacted<Uint8Array>): Layer.Layer<WebhookSecrets.WebhookSecrets> =>
  Layer.sync(WebhookSecrets.WebhookSecrets, () => make(key))

// A key file that cannot be read, written or parsed stops the start-up like a bad variable, naming the file.
const keyFileError = (path: string, message: string) =>
  ConfigError.InvalidData(["WEBHOOK_ENCRYPTION_KEY_FILE"], `${message} (${path})`)

const isCode = (error: unknown, code: string) => (error as { code?: unknown } | null)?.code === code

/**
 * The key kept in `path`: read when the file exists, else 32 random bytes written there first (mode 0600 in a
 * directory created 0700). Two processes starting at once agree on one key: each writes a file of its own
 * and links it into place, and the one whose link fails reads the winner's.
 *
 * @since 0.2.0
 * @category constructors
 */
export const keyFromFile = (path: string): Effect.Effect<Redacted.Redacted<Uint8Array>, ConfigError.ConfigError> =>
  Effect.suspend(() => {
    const read = (): Either.Either<Option.Option<string>, ConfigError.ConfigError> => {
      try {
        return Either.right(Option.some(readFileSync(path, "utf8")))
      } catch (error) {
        return isCode(error, "ENOENT")
          ? Either.right(Option.none())
          : Either.left(keyFileError(path, `cannot read the webhook encryption key: ${codeOf(error)}`))
      }
    }
    const existing = read()
    if (Either.isLeft(existing)) return Effect.fail(existing.left)
    let text = existing.right
    if (Option.isNone(text)) {
      const temporary = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`
      try {
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
        writeFileSync(temporary, `${randomBytes(KEY_BYTES).toString("base64")}\n`, { mode: 0o600, flag: "wx" })
        try {
          linkSync(temporary, path)
        } catch (error) {
          if (!isCode(error, "EEXIST")) throw error
        }
      } catch (error) {
        return Effect.fail(keyFileError(path, `cannot create the webhook encryption key: ${codeOf(error)}`))
      } finally {
        try {
          unlinkSync(temporary)
        } catch {
          // Never written: nothing to remove.
        }
      }
      const written = read()
      if (Either.isLeft(written)) return Effect.fail(written.left)
      text = written.right
    }
    if (Option.isNone(text)) return Effect.fail(keyFileError(path, "the webhook encryption key vanished"))
    return Either.match(parseKey(text.value), {
      onLeft: (message) => Effect.fail(keyFileError(path, message)),
      onRight: Effect.succeed
    })
  })

const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" ? code : String(error)
}

/**
 * Where the key comes from: `WEBHOOK_ENCRYPTION_KEY` (base64 of 32 bytes) when set, else the file
 * `WEBHOOK_ENCRYPTION_KEY_FILE` (default {@link defaultKeyFile}), generated on first use.
 *
 * @since 0.2.0
 * @category models
 */
export type KeySource =
  | { readonly _tag: "Key"; readonly key: Redacted.Redacted<Uint8Array> }
  | { readonly _tag: "File"; readonly path: string }

/**
 * Reads {@link KeySource} from the environment; a `WEBHOOK_ENCRYPTION_KEY` that is not base64 of 32 bytes is
 * refused naming the variable, never showing its value.
 *
 * @since 0.2.0
 * @category config
 */
export const keySource: Config.Config<KeySource> = Config.all({
  key: Config.option(
    Config.nested(
      Config.primitive("WEBHOOK_ENCRYPTION_KEY", (text) =>
        Either.mapLeft(parseKey(text), (message) => ConfigError.InvalidData([], message))
      ),
      "WEBHOOK_ENCRYPTION_KEY"
    )
  ),
  path: Config.nonEmptyString("WEBHOOK_ENCRYPTION_KEY_FILE").pipe(Config.withDefault(defaultKeyFile))
}).pipe(
  Config.map(
    ({ key, path }): KeySource =>
      Option.match(key, { onNone: () => ({ _tag: "File", path }), onSome: (key) => ({ _tag: "Key", key }) })
  )
)

/**
 * The key a {@link KeySource} names, the file created when it does not exist yet.
 *
 * @since 0.2.0
 * @category constructors
 */
export const loadKey = (source: KeySource): Effect.Effect<Redacted.Redacted<Uint8Array>, ConfigError.ConfigError> =>
  source._tag === "Key" ? Effect.succeed(source.key) : keyFromFile(source.path)

/**
 * The port with its key from the environment ({@link keySource}).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerConfig: Layer.Layer<WebhookSecrets.WebhookSecrets, ConfigError.ConfigError> = Layer.effect(
  WebhookSecrets.WebhookSecrets,
  Effect.map(Effect.flatMap(keySource, loadKey), make)
)
