/**
 * How a driver's failure reaches the ports.
 *
 * @since 0.1.0
 */
import { FileDataError } from "@filedata/core"

/**
 * Any failure of the database, as the ports' typed failure (never a defect).
 *
 * @since 0.1.0
 * @category constructors
 */
export const unavailable = (cause: unknown): FileDataError.StorageUnavailable =>
  new FileDataError.StorageUnavailable({ cause })
