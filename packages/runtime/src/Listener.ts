/**
 * Node listeners started as effects: the service's own and the metrics listener wait for the bind the same way
 * and report a port they cannot take as a failure at start, not as an event nobody hears.
 *
 * @since 0.1.0
 */
import type { Server } from "node:http"
import * as Effect from "effect/Effect"

/**
 * Starts `server` listening on `address`: succeeds once it listens, and fails with the listener's error
 * (`EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`) when it cannot.
 *
 * @since 0.1.0
 * @category constructors
 */
export const listen = (
  server: Server,
  address: { readonly host: string; readonly port: number }
): Effect.Effect<void, Error> =>
  Effect.async((resume) => {
    const failed = (cause: Error) => resume(Effect.fail(cause))
    server.once("error", failed)
    server.listen({ port: address.port, host: address.host }, () => {
      server.off("error", failed)
      resume(Effect.void)
    })
  })
