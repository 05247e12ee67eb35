/**
 * New API keys: `fdk_` and 32 random bytes in base64url, 256 bits that no one can guess, with a prefix
 * secret scanners can recognise when a key leaks into a repository or a log.
 *
 * @since 0.1.0
 */

import { randomBytes } from "node:crypto"
import { FileData } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

/**
 * What every generated key starts with.
 *
 * @since 0.1.0
 * @category constants
 */
export const PREFIX = "fdk_"

/**
 * How many random bytes a key carries.
 *
 * @since 0.1.0
 * @category constants
 */
export const RANDOM_BYTES = 32

/**
 * The length of a generated key: the prefix and 43 base64url characters (no padding).
 *
 * @since 0.1.0
 * @category constants
 */
export const KEY_LENGTH = PREFIX.length + Math.ceil((RANDOM_BYTES * 8) / 6)

const SHAPE = new RegExp(`^${PREFIX}[A-Za-z0-9_-]{${KEY_LENGTH - PREFIX.length}}$`)

/**
 * Whether a text has the shape of a generated key; keys imported from fixtures may have any shape.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isGenerated = (text: string): boolean => SHAPE.test(text)

/**
 * A fresh key, already inside `Redacted` so it cannot reach a log by accident.
 *
 * @since 0.1.0
 * @category constructors
 */
export const generate: Effect.Effect<FileData.ApiKey> = Effect.sync(() =>
  Redacted.make(FileData.ApiKeyText.make(PREFIX + randomBytes(RANDOM_BYTES).toString("base64url")))
)
