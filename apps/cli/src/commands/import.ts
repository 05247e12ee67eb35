/**
 * `import` and `append`: a fixture or submissions file read as a stream and written in one transaction, with
 * progress on a terminal.
 *
 * @since 0.2.0
 */
import { createReadStream } from "node:fs"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { type Append, type FileDataError, type Fixture, OperatorStore } from "@filedata/core"
import { AppendReader, FixtureReader } from "@filedata/fixture"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as CliError from "../CliError.js"
import * as Progress from "../Progress.js"
import { plural } from "./shared.js"

/**
 * What `import` and `append` fail with.
 *
 * @since 0.2.0
 * @category errors
 */
export type Failure =
  | ConfigError.ConfigError
  | FileDataError.StorageUnavailable
  | Fixture.FixtureInvalid
  | CliError.FixtureFileUnreadable
  | CliError.MalformedJson

// pnpm runs scripts from the workspace root and passes the caller's directory as INIT_CWD, so a path typed
// in a subdirectory must be read from there.
const baseDirectory = Config.string("INIT_CWD").pipe(
  Config.option,
  Config.map(Option.filter((dir) => dir.trim() !== ""))
)

const fixturePath = (file: string) =>
  Effect.gen(function* () {
    const path = yield* Path.Path
    const base = yield* baseDirectory
    return Option.match(base, { onNone: () => path.resolve(file), onSome: (dir) => path.resolve(dir, file) })
  })

const unreadable = (file: string) => (error: PlatformError.PlatformError) =>
  new CliError.FixtureFileUnreadable({
    file,
    reason:
      error._tag === "SystemError" && error.reason === "NotFound"
        ? "no such file"
        : error._tag === "SystemError" && error.reason === "PermissionDenied"
          ? "permission denied"
          : error.message
  })

// The file is read as a stream and written as it is read: only a batch of submissions is in memory at a time.
const streamFile = <Entry extends Fixture.FixtureEntry | Append.AppendEntry, A, E, R>(
  file: string,
  verb: string,
  read: (
    bytes: Stream.Stream<Uint8Array, CliError.FixtureFileUnreadable>
  ) => Stream.Stream<Entry, CliError.FixtureFileUnreadable | FixtureReader.FixtureMalformed | Fixture.FixtureInvalid>,
  write: (
    entries: Stream.Stream<Entry, CliError.FixtureFileUnreadable | CliError.MalformedJson | Fixture.FixtureInvalid>
  ) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const absolute = yield* fixturePath(file)
    const info = yield* Effect.mapError(fs.stat(absolute), unreadable(absolute))
    if (info.type === "Directory") {
      return yield* new CliError.FixtureFileUnreadable({ file: absolute, reason: "it is a directory" })
    }
    // A pipe (`/dev/stdin`, a named pipe, `<(curl …)`) cannot be read at positions, as the platform's file
    // stream reads: Node's own stream reads it in order.
    const source =
      info.type === "File"
        ? Stream.mapError(fs.stream(absolute), unreadable(absolute))
        : NodeStream.fromReadable<CliError.FixtureFileUnreadable>(
            () => createReadStream(absolute),
            (cause) =>
              new CliError.FixtureFileUnreadable({
                file: absolute,
                reason: cause instanceof Error ? cause.message : String(cause)
              })
          )
    const bytes = (meter: Progress.Meter) => source.pipe(Stream.tap((chunk) => meter.read(chunk.length)))
    // A signal interrupts the write, whose transaction rolls back before this line, which is then true.
    return yield* Effect.onInterrupt(
      Progress.track(
        info.type === "File" ? Number(info.size) : undefined,
        (meter) =>
          write(
            read(bytes(meter)).pipe(
              Stream.tap((entry: Fixture.FixtureEntry | Append.AppendEntry) =>
                entry._tag === "Submissions" ? meter.submissions(entry.submissions.length) : Effect.void
              ),
              Stream.catchTag("FixtureMalformed", (error) =>
                Stream.fail(new CliError.MalformedJson({ file: absolute, detail: error.message }))
              )
            )
          ),
        verb
      ),
      () => Console.error("interrupted: nothing was written")
    )
  })

/**
 * `import FILE.json`: a whole fixture, users, keys, files and submissions.
 *
 * @since 0.2.0
 * @category commands
 */
export const importCommand = Command.make(
  "import",
  {
    file: Args.text({ name: "FILE.json" }).pipe(
      Args.withDescription("the fixture to load; a relative path is read from the directory pnpm was called in")
    )
  },
  ({ file }) =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const summary = yield* streamFile(file, "importing", FixtureReader.fromBytes, store.importFixture)
      yield* Console.log(
        `imported ${plural(summary.users, "user", "users")}, ${plural(summary.apiKeys, "API key", "API keys")}, ` +
          `${plural(summary.files, "file", "files")}, ${plural(summary.submissions, "submission", "submissions")}`
      )
    })
).pipe(Command.withDescription("load a fixture file in one transaction: all of it or, on any error, nothing"))

/**
 * `append FILE.json`: submissions added to files that exist.
 *
 * @since 0.2.0
 * @category commands
 */
export const appendCommand = Command.make(
  "append",
  {
    file: Args.text({ name: "FILE.json" }).pipe(
      Args.withDescription(
        "the submissions to add, by file id; a relative path is read from the directory pnpm was called in"
      )
    )
  },
  ({ file }) =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      const summary = yield* streamFile(file, "appending", AppendReader.fromBytes, store.appendSubmissions)
      yield* Console.log(
        `appended ${plural(summary.submissions, "submission", "submissions")} to ${plural(summary.files, "file", "files")}`
      )
    })
).pipe(
  Command.withDescription(
    "add submissions to files that exist in one transaction, counters too: all of it or, on any error, nothing"
  )
)
