import * as Redacted from "effect/Redacted"
import { type ApiKey, ApiKeyText, FileId } from "../FileData.js"
import * as TextRules from "../TextRules.js"

// The fields were checked before they are made; the brands' own validation would only repeat it.
const trusted = { disableValidation: true } as const

/**
 * The request nearly every client sends, `{"fileId": "…", "apiKey": "…"}` with strings under the text rules,
 * accepted without the schema's machinery, which costs more than the rest of the decoding; `undefined` for
 * anything else, valid or not, which the schema then reads. A property test holds it to the schema's verdict.
 *
 * @internal
 */
export const commonShape = (body: unknown): { readonly fileId: FileId; readonly apiKey: ApiKey } | undefined => {
  if (typeof body !== "object" || body === null || Object.getPrototypeOf(body) !== Object.prototype) return undefined
  let fields = 0
  for (const key in body) {
    if (key !== "fileId" && key !== "apiKey") return undefined
    fields++
  }
  const { apiKey, fileId } = body as Record<string, unknown>
  return fields === 2 &&
    typeof fileId === "string" &&
    TextRules.isId(fileId) &&
    typeof apiKey === "string" &&
    TextRules.isNonEmptyText(apiKey)
    ? { fileId: FileId.make(fileId, trusted), apiKey: Redacted.make(ApiKeyText.make(apiKey, trusted)) }
    : undefined
}
