/**
 * `erase`: removes a file's submissions named by id or by content, for an erasure request
 * (docs/security.md#erasure).
 *
 * @since 0.3.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { type Erasure, type FileDataError, OperatorStore, SubmissionId } from "@filedata/core"
import * as Arr from "effect/Array"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as CliError from "../CliError.js"
import { fileOption, named, plural } from "./shared.js"

/**
 * What `erase` fails with: an unknown file, ids that are not the file's, a command line that names neither or
 * both kinds of selection.
 *
 * @since 0.3.0
 * @category errors
 */
export type Failure =
  | FileDataError.StorageUnavailable
  | Erasure.UnknownFile
  | Erasure.SubmissionsNotInFile
  | CliError.UsageError

// Repeated before it is checked: @effect/cli repeats only a plain option.
const idOption = Options.text("id").pipe(
  Options.withPseudoName("SUBMISSION_ID"),
  Options.repeated,
  Options.mapEffect((ids) => Effect.forEach(ids, named("--id", SubmissionId.SubmissionId))),
  Options.withDescription("a submission of the file to erase, by its id (repeat for several)")
)

const whereOption = Options.text("where").pipe(
  Options.withPseudoName("NAME=VALUE"),
  Options.repeated,
  Options.withDescription(
    "erase every submission whose content has exactly VALUE under NAME (repeat: all must hold); NAME ends at the first ="
  )
)

// NAME ends at the first `=`, so a value may hold more of them; a name with one cannot be named.
const match = (text: string): Effect.Effect<Erasure.ContentMatch, CliError.UsageError> => {
  const at = text.indexOf("=")
  return at === -1
    ? Effect.fail(
        new CliError.UsageError({
          detail: `--where: expected NAME=VALUE, such as --where email=ann@example.com, but received ${JSON.stringify(text)}`
        })
      )
    : Effect.succeed({ name: text.slice(0, at), value: text.slice(at + 1) })
}

const selection = (
  ids: ReadonlyArray<SubmissionId.SubmissionId>,
  wheres: ReadonlyArray<string>
): Effect.Effect<Erasure.Selection, CliError.UsageError> => {
  if (Arr.isNonEmptyReadonlyArray(ids) && wheres.length === 0) return Effect.succeed({ _tag: "Ids", ids })
  if (Arr.isNonEmptyReadonlyArray(wheres) && ids.length === 0) {
    return Effect.map(Effect.forEach(wheres, match), (matches) => ({
      _tag: "Where",
      matches: matches as Arr.NonEmptyArray<Erasure.ContentMatch>
    }))
  }
  return Effect.fail(
    new CliError.UsageError({
      detail:
        ids.length === 0
          ? "erase needs the submissions to erase: --id SUBMISSION_ID (repeatable) or --where NAME=VALUE (repeatable)"
          : "erase takes --id or --where, not both: erase by ids, or by content"
    })
  )
}

/**
 * `erase --file ID (--id SUBMISSION_ID ... | --where NAME=VALUE ...)`: one transaction, all or nothing. Prints
 * how many it erased and their ids, one a line; none matched is a success too.
 *
 * @since 0.3.0
 * @category commands
 */
export const eraseCommand = Command.make(
  "erase",
  { file: fileOption("the file whose submissions to erase"), ids: idOption, wheres: whereOption },
  ({ file, ids, wheres }) =>
    Effect.gen(function* () {
      const chosen = yield* selection(ids, wheres)
      const summary = yield* (yield* OperatorStore.OperatorStore).eraseSubmissions(file, chosen)
      yield* Console.log(
        `erased ${plural(summary.ids.length, "submission", "submissions")} of file ${summary.fileId}` +
          (summary.ids.length === 0 ? " (none matched)" : "")
      )
      yield* Effect.forEach(summary.ids, (id) => Console.log(id), { discard: true })
    })
).pipe(
  Command.withDescription(
    "erase a file's submissions by id or by content, with their copies in the webhook outbox; the file's webhooks are told"
  )
)
