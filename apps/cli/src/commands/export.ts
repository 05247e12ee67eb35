/**
 * `export`: a file's submissions written to stdout as CSV or NDJSON, as the export operation answers them.
 *
 * @since 0.2.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { ExportEncoder, ExportSubmissions, FileData, type FileDataError, FileRepository } from "@filedata/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as CliError from "../CliError.js"
import * as Progress from "../Progress.js"
import * as Stdout from "../Stdout.js"
import { choiceOption, fileOption, named } from "./shared.js"

/**
 * What `export` fails with.
 *
 * @since 0.2.0
 * @category errors
 */
export type Failure = FileDataError.StorageUnavailable | FileDataError.FileNotFound | CliError.UsageError

// An instant given on the command line, as a request gives one.
const instantOption = (name: "since" | "until", description: string) =>
  Options.text(name).pipe(
    Options.mapEffect(named(`--${name}`, FileData.InstantFromIso)),
    Options.withDescription(description),
    Options.optional
  )

/**
 * `export --file ID --format csv|ndjson [--since T] [--until T]`.
 *
 * @since 0.2.0
 * @category commands
 */
export const exportCommand = Command.make(
  "export",
  {
    file: fileOption("the id of the file to export"),
    format: choiceOption("format", ["csv", "ndjson"]).pipe(
      Options.withDescription(
        "csv: a header (createdDate, then every content name of the file) and a row per submission, RFC 4180 " +
          "with CRLF, a cell starting with = + - @ TAB or CR prefixed with '; ndjson: one submission per line"
      )
    ),
    since: instantOption("since", "only submissions with createdDate >= since"),
    until: instantOption("until", "only submissions with createdDate < until")
  },
  ({ file, format, since, until }) =>
    Effect.gen(function* () {
      const [s, u] = [Option.getOrUndefined(since), Option.getOrUndefined(until)]
      if (s !== undefined && u !== undefined && u < s) {
        return yield* new CliError.UsageError({ detail: "--until: must not be before --since" })
      }
      const files = yield* FileRepository.FileRepository
      const output = yield* Stdout.StandardOutput
      const reply = yield* ExportSubmissions.exportFile(files, {
        fileId: file,
        format,
        since: s,
        until: u
      })
      yield* Progress.trackWritten((meter) =>
        ExportEncoder.writeTo(reply, (piece) =>
          Effect.zipRight(output.write(piece), meter.written(Buffer.byteLength(piece)))
        )
      )
    })
).pipe(
  Command.withDescription(
    "write a file's submissions to stdout as CSV or NDJSON, in createdDate order, as the export operation does " +
      "(pnpm filedata export --file ID --format csv > submissions.csv); progress on stderr on a terminal"
  )
)
