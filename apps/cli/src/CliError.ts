/**
 * The CLI's own failures, the one place where any failure becomes lines on stderr, and the exit code it
 * ends with: 2 for a command line that is wrong (`docs/operations.md#the-cli`), 1 for a command that failed.
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
import * as Exit from "effect/Exit"
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
 * No stored key has the text `key find` read.
 *
 * @since 0.1.0
 * @category errors
 */
export class NoMatchingKey extends Schema.TaggedError<NoMatchingKey>()("NoMatchingKey", {}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return "no API key matches the key read from stdin"
  }
}

/**
 * The command line is wrong in a way @effect/cli does not check itself.
 *
 * @since 0.1.0
 * @category errors
 */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { detail: Schema.String }) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.detail
  }
}

/**
 * The exit code of a command line that is wrong: an unknown command or option, a missing argument, an
 * invalid value.
 *
 * @since 0.1.0
 * @category constants
 */
export const USAGE_EXIT_CODE = 2

/**
 * The exit code of a command that failed while it ran.
 *
 * @since 0.1.0
 * @category constants
 */
export const FAILURE_EXIT_CODE = 1

/**
 * A failure that has already been printed; all that is left is its exit code.
 *
 * @since 0.1.0
 * @category errors
 */
export class Reported extends Schema.TaggedError<Reported>()("Reported", {
  exitCode: Schema.optionalWith(Schema.Literal(FAILURE_EXIT_CODE, USAGE_EXIT_CODE), {
    default: () => FAILURE_EXIT_CODE
  })
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return this.exitCode === USAGE_EXIT_CODE ? "the command line is wrong" : "the command failed"
  }
}

const isUsageError = (error: unknown): boolean =>
  ValidationError.isValidationError(error) || error instanceof UsageError

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
  if (error instanceof FileDataError.FileNotFound) return ["no file has this id"]
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
 * Prints any failure of `self` to stderr and fails with {@link Reported}, carrying the exit code; an
 * interruption stays one, and a failure already reported passes as it is.
 *
 * @since 0.1.0
 * @category combinators
 */
export const report = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Reported, R> =>
  Effect.catchAllCause(self, (cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
    const failure = Option.getOrUndefined(Cause.failureOption(cause))
    if (failure instanceof Reported) return Effect.fail(failure)
    return Effect.zipRight(
      Effect.forEach(lines(cause), (line) => Console.error(line)),
      Effect.fail(new Reported({ exitCode: isUsageError(failure) ? USAGE_EXIT_CODE : FAILURE_EXIT_CODE }))
    )
  })

/**
 * The process's exit code for how the program ended: 0 on success, the code a {@link Reported} failure
 * carries, 1 for any other failure. An interruption (SIGINT, SIGTERM) ends with 0, as `runMain` does.
 *
 * @since 0.1.0
 * @category running
 */
export const exitCode = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return 0
  const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
  return failure instanceof Reported ? failure.exitCode : FAILURE_EXIT_CODE
}
