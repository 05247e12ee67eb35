import { createHmac } from "node:crypto"
import * as Redacted from "effect/Redacted"

const PREFIX = "whsec_"

/** The secret's key bytes: the base64 after `whsec_` (a secret given without the prefix is all base64). */
const keyOf = (secret: Redacted.Redacted<string>): Buffer => {
  const text = Redacted.value(secret)
  return Buffer.from(text.startsWith(PREFIX) ? text.slice(PREFIX.length) : text, "base64")
}

/**
 * `webhook-signature` of Standard Webhooks: one `v1,<base64 HMAC-SHA256>` per secret over
 * `<id>.<timestamp>.<body>`, space-separated (two entries while a rotation's old secret still signs).
 */
export const sign = (
  id: string,
  timestampSeconds: number,
  body: string,
  secrets: ReadonlyArray<Redacted.Redacted<string>>
): string =>
  secrets
    .map(
      (secret) =>
        `v1,${createHmac("sha256", keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`
    )
    .join(" ")
