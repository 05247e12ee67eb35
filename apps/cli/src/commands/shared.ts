/**
 * What the command groups share: options and arguments checked by a schema, counts in words, tables.
 *
 * @since 0.2.0
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import { FileData } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * `count` and the noun that goes with it: `1 file`, `2 files`.
 *
 * @since 0.2.0
 * @category formatting
 */
export const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`

/**
 * Rows as columns two spaces apart, each as wide as its widest cell; the last one is not padded.
 *
 * @since 0.2.0
 * @category formatting
 */
export const table = (rows: ReadonlyArray<ReadonlyArray<string>>): ReadonlyArray<string> => {
  const widths = rows.reduce<Array<number>>(
    (acc, row) => row.map((cell, column) => Math.max(acc[column] ?? 0, cell.length)),
    []
  )
  return rows.map((row) =>
    row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join("  ")
  )
}

/**
 * A value checked by `schema`, refused with the option's or argument's name and the schema's own words
 * (`--since: must be an ISO 8601 date-time with a zone, ...`), not the schema's tree of transformations.
 *
 * @since 0.2.0
 * @category parsing
 */
export const refusal =
  <A>(name: string, schema: Schema.Schema<A, string>) =>
  (text: string): Effect.Effect<A, HelpDoc.HelpDoc> =>
    Schema.decode(schema)(text).pipe(
      Effect.mapError((error) =>
        HelpDoc.p(
          `${name}: ${ParseResult.ArrayFormatter.formatErrorSync(error)
            .map((issue) => issue.message)
            .join("; ")}`
        )
      )
    )

/**
 * {@link refusal} as an option's invalid value, for `Options.mapEffect`.
 *
 * @since 0.2.0
 * @category parsing
 */
export const named =
  <A>(name: string, schema: Schema.Schema<A, string>) =>
  (text: string): Effect.Effect<A, ValidationError.ValidationError> =>
    Effect.mapError(refusal(name, schema)(text), ValidationError.invalidValue)

/**
 * `--file ID`, a file id under the text rules.
 *
 * @since 0.2.0
 * @category options
 */
export const fileOption = (description: string) =>
  Options.text("file").pipe(Options.mapEffect(named("--file", FileData.FileId)), Options.withDescription(description))

/**
 * `--NAME` taking one of `values`, shown in help as `--NAME a | b`, and refused as `--NAME: expected one of a, b
 * but received "c"`, as `--log-level` is: @effect/cli's `Options.choice` does not name the option it refuses.
 *
 * @since 0.2.0
 * @category options
 */
export const choiceOption = <const A extends string>(name: string, values: readonly [A, ...Array<A>]) =>
  Options.text(name).pipe(
    Options.withPseudoName(values.join(" | ")),
    Options.mapEffect((text) =>
      (values as ReadonlyArray<string>).includes(text)
        ? Effect.succeed(text as A)
        : Effect.fail(
            ValidationError.invalidValue(
              HelpDoc.p(`--${name}: expected one of ${values.join(", ")} but received ${JSON.stringify(text)}`)
            )
          )
    )
  )
