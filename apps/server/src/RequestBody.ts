/**
 * Reads a request body as JSON under the contract's rules: `application/json` only, in UTF-8 (a `charset`
 * parameter must say so), at most 64 KiB, chunked bodies included, no member name twice in one object.
 *
 * @since 0.1.0
 */

import type { IncomingMessage } from "node:http"
import { FileDataError, Immediate, JsonTokenizer } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as DuplicateMembers from "./DuplicateMembers.js"

/**
 * @since 0.1.0
 * @category constants
 */
export const MAX_BYTES = 64 * 1024

const refuse = (reason: FileDataError.InvalidRequest["reason"], detail: string) =>
  FileDataError.invalidRequest(reason, [new FileDataError.Issue({ pointer: "", detail })])

const tooLarge = refuse("PayloadTooLarge", `must be at most ${MAX_BYTES} bytes`)
const refusedTooLarge = () => Immediate.fail(tooLarge)

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

const notJson = refuse("UnsupportedMediaType", "Content-Type must be application/json")
const notUtf8 = refuse("UnsupportedMediaType", "Content-Type charset must be utf-8")

// A charset parameter's value, unquoted; any other parameter is ignored, as RFC 8259 gives JSON none.
const charset = (parameter: string): string | undefined => {
  const equals = parameter.indexOf("=")
  const name = (equals === -1 ? parameter : parameter.slice(0, equals)).trim().toLowerCase()
  if (name !== "charset") return undefined
  const value = equals === -1 ? "" : parameter.slice(equals + 1).trim()
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"')
    ? value.slice(1, -1).replace(/\\(.)/g, "$1")
    : value
}

/**
 * Why a `Content-Type` header refuses the body, or `undefined` when it is `application/json` with no
 * `charset` but UTF-8 (names and values in any case, the value quoted or not).
 *
 * @since 0.1.0
 * @category decoding
 */
export const checkContentType = (contentType: string | undefined): FileDataError.InvalidRequest | undefined => {
  if (contentType === "application/json") return undefined
  if (contentType === undefined) return notJson
  const [type = "", ...parameters] = contentType.split(";")
  if (type.trim().toLowerCase() !== "application/json") return notJson
  for (const parameter of parameters) {
    const value = charset(parameter)
    if (value !== undefined && value.toLowerCase() !== "utf-8") return notUtf8
  }
  return undefined
}

const duplicated = (found: DuplicateMembers.Duplicates): FileDataError.InvalidRequest =>
  FileDataError.invalidRequest(
    "InvalidPayload",
    found.pointers.map((pointer) => new FileDataError.Issue({ pointer, detail: "appears more than once" })),
    found.unlisted
  )

// Where and why the text is not JSON, in the fixture reader's words; only a refused body is tokenized again.
const syntaxDetail = (text: string): string => {
  const error = JsonTokenizer.syntaxError(text)
  return error === undefined
    ? "must be valid JSON"
    : `must be valid JSON: ${error.detail} at line ${error.line}, column ${error.column}`
}

/**
 * The body's bytes read as UTF-8 JSON, or the reason they cannot be.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parse = (bytes: Uint8Array): Either.Either<unknown, FileDataError.InvalidRequest> => {
  let text: string
  let parsed: unknown
  try {
    text = utf8.decode(bytes)
  } catch {
    return Either.left(refuse("MalformedJson", "must be valid UTF-8 JSON"))
  }
  if (text.trim() === "") return Either.left(refuse("MalformedJson", "must not be empty"))
  try {
    parsed = JSON.parse(text)
  } catch {
    return Either.left(refuse("MalformedJson", syntaxDetail(text)))
  }
  const duplicates = DuplicateMembers.find(text, parsed)
  return duplicates === undefined ? Either.right(parsed) : Either.left(duplicated(duplicates))
}

/**
 * Reads the body under the contract's limits on plain Node events and hands `done` its parse as a function,
 * called when the use case needs it (after the per-address limit), whose answer is already evaluated. Returns a
 * function that stops reading. The platform's own body cap destroys the socket, leaving the client without
 * an answer; reading the Node stream here lets an oversized body get its 422 on either server.
 *
 * @since 0.1.0
 * @category decoding
 */
export const read = (
  message: IncomingMessage,
  done: (body: () => Effect.Effect<unknown, FileDataError.InvalidRequest>) => void
): (() => void) => {
  const refused = checkContentType(message.headers["content-type"])
  if (refused !== undefined) {
    done(() => Immediate.fail(refused))
    return () => {}
  }
  if (Number(message.headers["content-length"]) > MAX_BYTES) {
    done(refusedTooLarge)
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
      done(refusedTooLarge)
    } else {
      chunks.push(chunk)
    }
  }
  const onEnd = () => {
    stop()
    let bytes: Buffer | undefined = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)
    chunks.length = 0
    let parsed: Either.Either<unknown, FileDataError.InvalidRequest> | undefined
    // Parsed once, the bytes let go: the thunk lives as long as the request, which may wait.
    done(() => {
      if (bytes !== undefined) {
        parsed = parse(bytes)
        bytes = undefined
      }
      return Either.match(parsed as Either.Either<unknown, FileDataError.InvalidRequest>, {
        onLeft: Immediate.fail,
        onRight: Immediate.succeed
      })
    })
  }
  const onError = () => {
    stop()
    done(() => Immediate.fail(refuse("MalformedJson", "could not be read completely")))
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
      const stop = read(message, (body) => resume(Effect.succeed(Effect.suspend(body))))
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
  checkContentType(headers["content-type"]) !== undefined || Number(headers["content-length"]) > MAX_BYTES
