import { hash } from "node:crypto"
import type { FileData } from "@filedata/core"
import { FileDataError } from "@filedata/core"
import * as Redacted from "effect/Redacted"

/** @internal */
export const unavailable = (cause: unknown): FileDataError.StorageUnavailable =>
  new FileDataError.StorageUnavailable({ cause })

/** @internal */
export const hashKeyText = (text: string): string => hash("sha256", text, "hex")

/** @internal */
export const hashKey = (apiKey: FileData.ApiKey): string => hashKeyText(Redacted.value(apiKey))
