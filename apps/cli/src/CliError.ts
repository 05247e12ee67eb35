/**
 * The CLI's own failures and the one place where any failure becomes lines on stderr.
 *
 * @since 0.1.0
 */
import * as ValidationError from "@effect/cli/ValidationError"
import { FileDataError, Fixture } from "@filedata/core"
import { StartupFailure } from "@filedata/runtime"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * The fixture file could not be read.
 *
 * @since 0.1.0
 * @category errors
 */
export class FixtureFileUnreadable extends Schema.TaggedError<FixtureFileUnreadable>()("FixtureFileUnreadable", {
  file: Schema.String,
  reason: Schema.String
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return `cannot read ${this.file}: ${this.reason}`
  }
}

/**
 * The fixture file is not JSON.
 *
 * @since 0.1.0
 * @category errors
 */
export class MalformedJson extends Schema.TaggedError<MalformedJson>()("MalformedJson", {
  file: Schema.String,
  detail: Schema.String
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return `${this.file} is not valid JSON: ${this.detail}`
  }
}

/**
 * A failure that has already been printed; all that is left is a non-zero exit code.
 *
 * @since 0.1.0
 * @category errors
 */
export class Reported extends Schema.TaggedError<Reported>()("Reported", {}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return "the command failed"
  }
}

/**
 * How many fixture issues are printed before the rest is only counted; a broken generator can produce
 * thousands, and the first few are what an operator fixes first.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ISSUE_LINES = 20

const issueLines = (error: Fixture.FixtureInvalid): ReadonlyArray<string> => {
  const shown = error.issues.slice(0, MAX_ISSUE_LINES).map((issue) => `${issue.path}: ${issue.detail}`)
  const total = error.issues.length + error.omitted
  const hidden = total - shown.length
  return [
    `the fixture was rejected and nothing was written (${total} ${total === 1 ? "problem" : "problems"}):`,
    ...shown,
    ...(hidden > 0 ? [`and ${hidden} more`] : [])
  ]
}

const errorLines = (error: unknown): ReadonlyArray<string> => {
  // @effect/cli prints its own errors with the usage that goes with them, and `Reported` ones are printed.
  if (ValidationError.isValidationError(error) || error instanceof Reported) return []
  // The same line as the server's when the configuration is wrong or the database cannot be opened.
  if (ConfigError.isConfigError(error) || error instanceof StartupFailure.DependencyUnavailable) {
    return [StartupFailure.describe(error)]
  }
  if (error instanceof Fixture.FixtureInvalid) return issueLines(error)
  if (error instanceof FileDataError.StorageUnavailable) {
    const cause = StartupFailure.causeMessage(error.cause)
    return [cause === "" ? "storage is not available" : `storage is not available: ${cause}`]
  }
  if (error instanceof Error) return [StartupFailure.causeMessage(error)]
  return [`unexpected error: ${StartupFailure.causeMessage(error)}`]
}

/**
 * The stderr lines for a failure: typed errors in their own words, defects as one line, never a stack trace.
 *
 * @since 0.1.0
 * @category rendering
 */
export const lines = (cause: Cause.Cause<unknown>): ReadonlyArray<string> =>
  Option.match(Cause.failureOption(cause), {
    onSome: errorLines,
    onNone: () =>
      Option.match(Cause.dieOption(cause), {
        onSome: (defect) => [`unexpected error: ${StartupFailure.causeMessage(defect)}`],
        onNone: () => []
      })
  })

/**
 * Prints any failure of `self` to stderr and fails with {@link Reported}; an interruption stays one.
 *
 * @since 0.1.0
 * @category combinators
 */
export const report = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Reported, R> =>
  Effect.catchAllCause(self, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.interrupt
      : Effect.zipRight(
          Effect.forEach(lines(cause), (line) => Console.error(line)),
          Effect.fail(new Reported())
        )
  )
