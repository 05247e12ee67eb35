/**
 * What a transport hands the use cases, with the body's read journalled, so a test sees whether and when the
 * body was read.
 */
import * as Effect from "effect/Effect"
import type * as FileRequest from "../../src/shared/FileRequest.js"
import type { Journal } from "./Journal.js"

export const ADDRESS = "203.0.113.7"

export const input = (body: unknown, journal: Journal, clientAddress = ADDRESS): FileRequest.Input => ({
  clientAddress,
  body: Effect.sync(() => {
    journal.push("body")
    return body
  })
})
