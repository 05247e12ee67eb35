/**
 * The waits of a streamed reply: for the socket to drain, for the reply to finish, and the send timeout that
 * abandons a reply the client accepts nothing of.
 *
 * @internal
 */
import type { ServerResponse } from "node:http"
import type { Writable } from "node:stream"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Runtime from "effect/Runtime"
import * as Instrumentation from "../../Instrumentation.js"
import type { Frame } from "../Reply.js"

/**
 * The client went away, or its reply was abandoned: nothing more can be written (`Reply.ClientGone`).
 *
 * @internal
 */
export class ClientGone extends Data.TaggedError("ClientGone") {}

// Waits until `stream` drains, or fails once it is closed. Made by this function, outside the one that
// receives each piece, so no closure holds a piece: docs/performance.md#drain-wait-made-once-per-reply
/** @internal */
export const drainOf = (stream: Writable): Effect.Effect<void, ClientGone> =>
  Effect.async<void, ClientGone>((resume) => {
    let turn: NodeJS.Immediate | undefined
    // A reader as fast as the loopback drains within the same tick ("drain" comes on the next-tick
    // queue), so a big reply would hold the event loop from its first page to its last. Going on from
    // `setImmediate` lets other sockets be served between pages.
    const onDrain = () => {
      stream.off("close", onClose)
      turn = setImmediate(() => resume(Effect.void))
    }
    const onClose = () => {
      stream.off("drain", onDrain)
      resume(Effect.fail(new ClientGone()))
    }
    stream.once("drain", onDrain)
    stream.once("close", onClose)
    return Effect.sync(() => {
      if (turn !== undefined) clearImmediate(turn)
      stream.off("drain", onDrain)
      stream.off("close", onClose)
    })
  })

// Waits until the whole reply is handed to the socket, or the connection is gone.
/** @internal */
export const finishOf = (response: ServerResponse): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const onEnd = () => {
      response.off("finish", onEnd)
      response.off("close", onEnd)
      resume(Effect.void)
    }
    response.on("finish", onEnd)
    response.on("close", onEnd)
    return Effect.sync(() => {
      response.off("finish", onEnd)
      response.off("close", onEnd)
    })
  })

/** @internal */
export const abandoned = (frame: Frame): Effect.Effect<void> =>
  Effect.zipRight(
    Effect.logWarning(`reply abandoned: the client accepted nothing of it for ${frame.sendTimeoutMillis} ms`).pipe(
      Effect.annotateLogs("requestId", frame.requestId)
    ),
    Metric.increment(Instrumentation.repliesAbandoned)
  )

// Node's socket timeout is renewed by every write the socket completes or reads, and a reply that waits for
// `drain` writes nothing more, so it fires after the send timeout without progress. Set once per streamed
// reply, by this function, for the same reason as `drainOf`. Node sets the keep-alive timeout in its place
// once the reply has finished.
/** @internal */
export const armSendTimeout = (response: ServerResponse, frame: Frame): Effect.Effect<void> =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    response.setTimeout(frame.sendTimeoutMillis, () => {
      response.destroy()
      Runtime.runFork(runtime)(abandoned(frame))
    })
  })
