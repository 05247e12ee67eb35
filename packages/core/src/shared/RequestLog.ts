/**
 * What a request's log line learns while the request is served: the use case names the file and the key's
 * user once it knows them, the transport adds the problem it answers with and, last, the request's own fields,
 * and writes one line per request at `info`. Never a key, never a body.
 *
 * The fields are a record of the request's own, which the transport hands the use case (`FileRequest.Input`'s
 * `fields`) and its fiber holds (`use`), rather than the fiber's log annotations: setting an annotation copies the
 * fiber's table of fiber refs each time, which cost a request at `info` about an eighth of its CPU
 * (docs/performance.md#request-fields); and the use case fills it with no fiber at all on the immediate path.
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
 * Makes `fields` the current fiber's record for the request it serves, as {@link begin} does with a new one:
 * for a transport that also hands the record to the use case (`FileRequest.Input`'s `fields`).
 *
 * @since 0.2.0
 * @category logging
 */
export const use = (fields: Fields): Effect.Effect<void> => FiberRef.set(currentFields, fields)

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

/**
 * Logs the request's line at `info`: `message` with the fields gathered and then `last`, as the message's second
 * part (`Effect.logInfo(message, fields)`), the fiber's annotations as they are.
 *
 * @since 0.1.0
 * @category logging
 */
export const write = (message: string, last: Fields): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    const fields = fiber.getFiberRef(currentFields)
    return Effect.logInfo(message, fields === undefined ? last : Object.assign(fields, last))
  })
