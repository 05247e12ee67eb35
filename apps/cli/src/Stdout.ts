/**
 * Standard output as a command writes a long body to it (an export): piece by piece, waiting while the pipe
 * is full, so a slow reader (`| gzip > out.gz`, a pager) holds the export back instead of memory growing.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Where a command writes its body.
 *
 * @since 0.2.0
 * @category models
 */
export interface Output {
  /** Writes a piece (text, or UTF-8 bytes), done once the stream can take more. */
  readonly write: (piece: string | Uint8Array) => Effect.Effect<void>
}

/**
 * The output commands write their bodies to; it drops them unless given, so the command tree runs anywhere.
 *
 * @since 0.2.0
 * @category tags
 */
export class StandardOutput extends Context.Reference<StandardOutput>()("@filedata/cli/Stdout/StandardOutput", {
  defaultValue: (): Output => ({ write: () => Effect.void })
}) {}

/**
 * The process's stdout, with back-pressure: a write the stream does not take at once waits for `drain`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerProcess: Layer.Layer<never> = Layer.succeed(StandardOutput, {
  write: (piece) =>
    Effect.async<void>((resume) => {
      if (process.stdout.write(piece)) return resume(Effect.void)
      process.stdout.once("drain", () => resume(Effect.void))
    })
})
