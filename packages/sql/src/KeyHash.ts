/**
 * How an API key is stored: only the SHA-256 of its text, so a copy of the database gives no usable key.
 *
 * @since 0.1.0
 */
import { hash } from "node:crypto"
import type { FileData } from "@filedata/core"
import * as Redacted from "effect/Redacted"

/**
 * The stored form of a key's text: SHA-256 of its UTF-8 bytes, as lowercase hex.
 *
 * @since 0.1.0
 * @category hashing
 */
export const hashKeyText = (text: string): string => hash("sha256", text, "hex")

/**
 * The stored form of an API key.
 *
 * @since 0.1.0
 * @category hashing
 */
export const hashKey = (apiKey: FileData.ApiKey): string => hashKeyText(Redacted.value(apiKey))
