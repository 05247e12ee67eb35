/**
 * Why a start failed, as the one line the server and the CLI print before they exit non-zero.
 *
 * @since 0.1.0
 */
import * as ConfigError from "effect/ConfigError"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as ServiceConfig from "./ServiceConfig.js"

/**
 * The database or Redis could not be used when the service started: which variable named it, its address
 * (never with a password), and the adapter's failure, whose cause chain holds the driver's own reason.
 *
 * @since 0.1.0
 * @category errors
 */
export class DependencyUnavailable extends Schema.TaggedError<DependencyUnavailable>()("DependencyUnavailable", {
  dependency: Schema.Literal("the database", "Redis"),
  variable: Schema.String,
  address: Schema.String,
  cause: Schema.Defect
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    const reason = causeMessage(this.cause)
    return `${this.dependency} at ${this.variable}=${this.address} is not available${reason === "" ? "" : `: ${reason}`}`
  }
}

/**
 * A listener of the service's own, other than the public one, could not listen: which variables name its
 * address, and the system's reason (`EADDRINUSE`, `EACCES`).
 *
 * @since 0.1.0
 * @category errors
 */
export class CannotListen extends Schema.TaggedError<CannotListen>()("CannotListen", {
  /** The variables and their values, e.g. `METRICS_HOST=127.0.0.1 METRICS_PORT=9464`. */
  address: Schema.String,
  cause: Schema.Defect
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return `cannot listen on ${this.address}: ${causeMessage(this.cause)}`
  }
}

// Our adapters' own wrappers ("Storage is not available") say less than the line around them already does.
const wrappers = new Set(["StorageUnavailable", "RateLimiterUnavailable"])

const ownMessage = (value: unknown): string => {
  if (value instanceof AggregateError && value.message === "") {
    return value.errors.map(ownMessage).join("; ")
  }
  if (value instanceof Error) return value.message === "" ? value.name : value.message
  if (typeof value === "string") return value
  if (Predicate.hasProperty(value, "message") && typeof value.message === "string") return value.message
  return value === undefined || value === null ? "" : String(value)
}

/**
 * The messages along a cause chain, outermost first, joined by `: `: the SQL client's "Failed to connect"
 * followed by the driver's `database "x" does not exist`. A message that already contains the next one
 * stands for both; the adapters' port failures are skipped.
 *
 * @since 0.1.0
 * @category formatting
 */
export const causeMessage = (value: unknown): string => {
  const parts: Array<string> = []
  const seen = new Set<unknown>()
  let current = value
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current)
    const tag = Predicate.hasProperty(current, "_tag") ? current._tag : undefined
    if (!(typeof tag === "string" && wrappers.has(tag))) {
      const own = ownMessage(current)
      const last = parts.at(-1)
      if (own !== "" && !last?.includes(own)) parts.push(own)
    }
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return parts.join(": ")
}

/**
 * The one line for a failure that ended the start: invalid configuration names each variable and what is
 * wrong; an unavailable database or Redis names the variable, the address and the driver's reason.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describe = (error: unknown): string => {
  if (ConfigError.isConfigError(error)) return ServiceConfig.formatError(error)
  if (error instanceof DependencyUnavailable || error instanceof CannotListen) return `Cannot start: ${error.message}`
  const reason = causeMessage(error)
  return reason === "" ? "Cannot start" : `Cannot start: ${reason}`
}
