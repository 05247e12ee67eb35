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

const parse = (bytes: Buffer): Effect.Effect<unknown, FileDataError.InvalidRequest> => {
  try {
    const text = utf8.decode(bytes)
    return text.trim() === ""
      ? Effect.fail(refuse("MalformedJson", "must not be empty"))
      : Effect.succeed(JSON.parse(text) as unknown)
  } catch {
    return Effect.fail(refuse("MalformedJson", "must be valid UTF-8 JSON"))
  }
}

/**
 * Reads the body under the contract's limits on plain Node events and hands `done` its parse, still to be
 * run: the caller decides when parsing happens (after the per-address limit, in the use case). Returns a
 * function that stops reading. The platform's own body cap destroys the socket, leaving the client without
 * an answer; reading the Node stream here lets an oversized body get its 422 on either server.
 *
 * @since 0.1.0
 * @category decoding
 */
export const read = (
  message: IncomingMessage,
  done: (body: Effect.Effect<unknown, FileDataError.InvalidRequest>) => void
): (() => void) => {
  if (!isJson(message.headers["content-type"])) {
    done(Effect.fail(refuse("UnsupportedMediaType", "Content-Type must be application/json")))
    return () => {}
  }
  if (Number(message.headers["content-length"]) > MAX_BYTES) {
    done(Effect.fail(tooLarge))
    return () => {}
  }
  const chunks: Array<Buffer> = []
  let size = 0
  const stop = () => {
    message.off("data", onData)
    message.off("end", onEnd)
    message.off("error", onError)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > MAX_BYTES) {
      stop()
      done(Effect.fail(tooLarge))
    } else {
      chunks.push(chunk)
    }
  }
  const onEnd = () => {
    stop()
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)
    done(Effect.suspend(() => parse(bytes)))
  }
  const onError = () => {
    stop()
    done(Effect.fail(refuse("MalformedJson", "could not be read completely")))
  }
  message.on("data", onData)
  message.on("end", onEnd)
  message.on("error", onError)
  return stop
}

/**
 * The body parsed as JSON, or the reason it cannot be.
 *
 * @since 0.1.0
 * @category decoding
 */
export const readJson = (message: IncomingMessage): Effect.Effect<unknown, FileDataError.InvalidRequest> =>
  Effect.flatten(
    Effect.async<Effect.Effect<unknown, FileDataError.InvalidRequest>>((resume) => {
      const stop = read(message, (body) => resume(Effect.succeed(body)))
      return Effect.sync(stop)
    })
  )

/**
 * Whether `read` refuses a request on its header fields alone, before any byte of the body: such a request
 * is answered without inviting its body (`Expect: 100-continue`).
 *
 * @since 0.1.0
 * @category decoding
 */
export const refusesByHeaders = (headers: IncomingMessage["headers"]): boolean =>
  !isJson(headers["content-type"]) || Number(headers["content-length"]) > MAX_BYTES
