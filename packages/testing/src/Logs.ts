/**
 * What an effect logs, kept for the test to read.
 *
 * @since 0.1.0
 */
import * as Logger from "effect/Logger"

/**
 * A logged line: its level's label and its message.
 *
 * @since 0.1.0
 * @category models
 */
export interface Line {
  readonly level: string
  readonly message: unknown
}

/**
 * A layer that replaces the default logger, and the lines it has kept so far.
 *
 * @since 0.1.0
 * @category constructors
 */
export const capture = () => {
  const lines: Array<Line> = []
  const logger = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => void lines.push({ level: logLevel.label, message }))
  )
  return { lines, logger }
}
