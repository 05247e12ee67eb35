/**
 * Reads a request body as JSON under the contract's rules: `application/json` only, at most 64 KiB,
 * chunked bodies included.
 *
 * @since 0.1.0
 */

import type { IncomingMessage } from "node:http"
import { FileDataError } from "@filedata/core"
import * as Effect from "effect/Effect"

/**
 * @since 0.1.0
 * @category constants
 */
export const MAX_BYTES = 64 * 1024

const refuse = (reason: FileDataError.InvalidRequest["reason"], detail: string) =>
  new FileDataError.InvalidRequest({ reason, issues: [new FileDataError.Issue({ pointer: "", detail })] })

const tooLarge = refuse("PayloadTooLarge", `must be at most ${MAX_BYTES} bytes`)

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

const isJson = (contentType: string | undefined): boolean =>
  contentType !== undefined && (contentType.split(";", 1)[0] ?? "").trim().toLowerCase() === "application/json"

// The platform's body size cap destroys the socket, leaving the client without an answer; reading the
// Node stream here lets an oversized body get its 422, on the hot route and the platform's alike.
const readBytes = (message: IncomingMessage) =>
  Effect.async<Buffer, FileDataError.InvalidRequest>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      message.off("data", onData)
      message.off("end", onEnd)
      message.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BYTES) {
        cleanup()
        resume(Effect.fail(tooLarge))
      } else {
        chunks.push(chunk)
      }
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks, size)))
    }
    const onError = () => {
      cleanup()
      resume(Effect.fail(refuse("MalformedJson", "could not be read completely")))
    }
    message.on("data", onData)
    message.on("end", onEnd)
    message.on("error", onError)
    return Effect.sync(cleanup)
  })

/**
 * The body parsed as JSON, or the reason it cannot be.
 *
 * @since 0.1.0
 * @category decoding
 */
export const readJson = (message: IncomingMessage): Effect.Effect<unknown, FileDataError.InvalidRequest> =>
  Effect.suspend(() => {
    if (!isJson(message.headers["content-type"])) {
      return Effect.fail(refuse("UnsupportedMediaType", "Content-Type must be application/json"))
    }
    const declared = Number(message.headers["content-length"])
    if (declared > MAX_BYTES) return Effect.fail(tooLarge)
    return Effect.flatMap(readBytes(message), (bytes) => {
      try {
        const text = utf8.decode(bytes)
        return text.trim() === ""
          ? Effect.fail(refuse("MalformedJson", "must not be empty"))
          : Effect.succeed(JSON.parse(text) as unknown)
      } catch {
        return Effect.fail(refuse("MalformedJson", "must be valid UTF-8 JSON"))
      }
    })
  })
