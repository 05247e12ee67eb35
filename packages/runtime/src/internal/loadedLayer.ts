import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * A layer whose module is imported only when the layer is built: adapters a configuration does not name cost
 * no start-up time (the PostgreSQL and Redis clients together were about a tenth of it).
 *
 * @internal
 */
export const loadedLayer = <M, A, E, R>(
  load: () => Promise<M>,
  build: (module: M) => Layer.Layer<A, E, R>
): Layer.Layer<A, E, R> => Layer.unwrapEffect(Effect.map(Effect.promise(load), build))
