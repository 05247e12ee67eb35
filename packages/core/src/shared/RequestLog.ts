/**
 * What a request's log line learns while its fiber serves it: the webhook operations name the file and the key's
 * user once they know them, the transport adds the problem it answers with, and writes one line per request at
 * `info` with these fields first. Never a key, never a body. (The operations on a file say the same in what they
 * return or fail with, `FileDataError.Subject`, and need no record.)
 *
 * The fields are a record of the request's own, which its fiber holds (`begin`), rather than the fiber's log
 * annotations: setting an annotation copies the fiber's table of fiber refs each time, which cost a request at
 * `info` about an eighth of its CPU (docs/performance.md#request-fields).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import { globalValue } from "effect/GlobalValue"

/**
 * The fields of one request's log line.
 *
 * @since 0.1.0
 * @category models
 */
export type Fields = Record<string, string | number>

/**
 * The fields of the request the current fiber serves; none while it serves no request whose line is written.
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const currentFields: FiberRef.FiberRef<Fields | undefined> = globalValue(
  // One reference however many copies of this module are loaded, as Effect does for its own.
  Symbol.for("@filedata/core/RequestLog/currentFields"),
  () => FiberRef.unsafeMake<Fields | undefined>(undefined)
)

/**
 * Gives the current fiber a record of its own for the request it serves; a transport calls it first in the
 * request's fiber when it writes the request's line. Nothing restores the previous record: the fiber ends with
 * the request.
 *
 * @since 0.1.0
 * @category logging
 */
export const begin: Effect.Effect<void> = Effect.suspend(() => FiberRef.set(currentFields, {}))

/**
 * Adds `key: value` to the current request's fields; nothing when no line is written for it (no `begin`).
 *
 * @since 0.1.0
 * @category logging
 */
export const annotate = (key: string, value: string): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const fields = fiber.getFiberRef(currentFields)
    if (fields !== undefined) fields[key] = value
    return Effect.void
  })
