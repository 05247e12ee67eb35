/**
 * Structured logging: one JSON object per line on stdout, filtered by `LOG_LEVEL`.
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (level: LogLevel.LogLevel): Layer.Layer<never> =>
  Layer.merge(Logger.json, Logger.minimumLogLevel(level))
