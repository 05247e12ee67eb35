/**
 * What a request's log line learns while the request is served: the use case names the file and the key's
 * user once it knows them, and the transport's one line per request, written last in the same fiber at `info`,
 * carries them. Never a key, never a body.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as LogLevel from "effect/LogLevel"

/**
 * Adds `key: value` to the annotations of every line the current fiber logs from now on, when lines at `info`
 * are written at all. Unlike `Effect.annotateLogs` it opens no scope to restore them: a request's fiber ends
 * with its log line.
 *
 * @since 0.1.0
 * @category logging
 */
export const annotate = (key: string, value: string): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) =>
    // Setting a fiber's annotations copies its table of fiber refs: measured, a tenth of a request's CPU time
    // when nothing writes the line (docs/performance.md#request-metrics-and-spans).
    LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), LogLevel.Info)
      ? Effect.void
      : FiberRef.update(FiberRef.currentLogAnnotations, (annotations) => HashMap.set(annotations, key, value))
  )
