/**
 * The command tree of `filedata`. Handlers need only the `OperatorStore` port and the platform services of
 * `NodeContext`, so tests run the tree in-process against a real database.
 *
 * @since 0.1.0
 */
import { createReadStream } from "node:fs"
import * as Args from "@effect/cli/Args"
import type * as CliApp from "@effect/cli/CliApp"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Span from "@effect/cli/HelpDoc/Span"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as PlatformError from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as NodeStream from "@effect/platform-node/NodeStream"
import {
  type Append,
  ExportEncoder,
  ExportSubmissions,
  FileData,
  type FileDataError,
  FileRepository,
  type Fixture,
  OperatorStore,
  TextRules,
  type Webhook,
  WebhookStore
} from "@filedata/core"
import { AppendReader, FixtureReader } from "@filedata/fixture"
import { ServiceConfig } from "@filedata/runtime"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ApiKeyGenerator from "./ApiKeyGenerator.js"
import * as CliError from "./CliError.js"
import * as DemoFixture from "./DemoFixture.js"
import * as Progress from "./Progress.js"
import * as Stdin from "./Stdin.js"
import * as Stdout from "./Stdout.js"

/**
 * Every failure a command of the tree can end with, besides @effect/cli's own `ValidationError`.
 *
 * @since 0.1.0
 * @category errors
 */
export type CommandError =
  | ConfigError.ConfigError
  | FileDataError.StorageUnavailable
  | FileDataError.FileNotFound
  | Fixture.FixtureInvalid
  | OperatorStore.UserNotFound
  | OperatorStore.UserExists
  | OperatorStore.KeyNotFound
  | CliError.FixtureFileUnreadable
  | CliError.MalformedJson
  | CliError.NoMatchingKey
  | CliError.UsageError

/**
 * The program name shown in usage and help.
 *
 * @since 0.1.0
 * @category constants
 */
export const NAME = "filedata"

/**
 * The version `--version` prints.
 *
 * @since 0.1.0
 * @category constants
 */
export const VERSION = "0.1.0"

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`

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

const importFile = (file: string) =>
  Effect.flatMap(OperatorStore.OperatorStore, (store) =>
    streamFile(file, "importing", FixtureReader.fromBytes, store.importFixture)
  )

const importCommand = Command.make(
  "import",
  {
    file: Args.text({ name: "FILE.json" }).pipe(
      Args.withDescription("the fixture to load; a relative path is read from the directory pnpm was called in")
    )
  },
  ({ file }) =>
    Effect.gen(function* () {
      const summary = yield* importFile(file)
      yield* Console.log(
        `imported ${plural(summary.users, "user", "users")}, ${plural(summary.apiKeys, "API key", "API keys")}, ` +
          `${plural(summary.files, "file", "files")}, ${plural(summary.submissions, "submission", "submissions")}`
      )
    })
).pipe(Command.withDescription("load a fixture file in one transaction: all of it or, on any error, nothing"))

const appendCommand = Command.make(
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

// A value checked by `schema`, refused with the option's or argument's name and the schema's own words
// (`--since: must be an ISO 8601 date-time with a zone, ...`), not the schema's tree of transformations.
const refusal =
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

const named =
  <A>(name: string, schema: Schema.Schema<A, string>) =>
  (text: string): Effect.Effect<A, ValidationError.ValidationError> =>
    Effect.mapError(refusal(name, schema)(text), ValidationError.invalidValue)

// An instant given on the command line, as a request gives one.
const instantOption = (name: "since" | "until", description: string) =>
  Options.text(name).pipe(
    Options.mapEffect(named(`--${name}`, FileData.InstantFromIso)),
    Options.withDescription(description),
    Options.optional
  )

const exportCommand = Command.make(
  "export",
  {
    file: Options.text("file").pipe(
      Options.mapEffect(named("--file", FileData.FileId)),
      Options.withDescription("the id of the file to export")
    ),
    format: Options.choice("format", ["csv", "ndjson"]).pipe(
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

// A server bound to every interface is reached locally through the loopback address.
const reachableHost = (host: string): string =>
  host === "0.0.0.0" || host === "::" || host === "[::]" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host

const curlLine = (host: string, port: string, apiKey: FileData.ApiKey): string => {
  const body = JSON.stringify({ fileId: DemoFixture.fileId, apiKey: Redacted.value(apiKey) })
  return `curl -sS -X POST http://${reachableHost(host)}:${port}/api/v1/file-data -H 'Content-Type: application/json' -d '${body}'`
}

const demoCommand = Command.make("demo", {}, () =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const config = yield* ServiceConfig.config
    const apiKey = yield* ApiKeyGenerator.generate
    if (yield* store.userExists(DemoFixture.userId)) {
      const info = yield* store.createKey(DemoFixture.userId, apiKey)
      yield* Console.log(`user ${DemoFixture.userId} already exists; created a new API key for it (id ${info.id})`)
    } else {
      const fixture = yield* DemoFixture.make(apiKey)
      yield* store.importFixture(fixture)
      yield* Console.log(
        `created user ${DemoFixture.userId} with ${plural(fixture.files.length, "file", "files")}: ` +
          fixture.files
            .map((file) => `${file.id} (${plural(file.submissions.length, "submission", "submissions")})`)
            .join(", ")
      )
    }
    yield* Console.log(`API key (shown only now): ${Redacted.value(apiKey)}`)
    // The docs' examples read the key from this variable, so they run as written after `demo`.
    yield* Console.log(`For the examples in README.md and docs/: export FILEDATA_API_KEY=${Redacted.value(apiKey)}`)
    yield* Console.log(
      config.port === 0
        ? "Try it, with the server running and PORT replaced by the port it reports:"
        : "Try it, with the server running (pnpm start):"
    )
    yield* Console.log(curlLine(config.host, config.port === 0 ? "PORT" : String(config.port), apiKey))
  })
).pipe(Command.withDescription("create a demo user with files and print a key and a curl command to try"))

const userOption = Options.text("user").pipe(
  Options.mapEffect(named("--user", FileData.UserId)),
  Options.withDescription("user id")
)

const createKeyCommand = Command.make("create", { user: userOption }, ({ user }) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const apiKey = yield* ApiKeyGenerator.generate
    const info = yield* store.createKey(user, apiKey)
    yield* Console.log(`created API key ${info.id} for user ${info.userId}`)
    yield* Console.log(`API key: ${Redacted.value(apiKey)}`)
    yield* Console.log("Store it now: only its hash is kept, so it cannot be shown again.")
  })
).pipe(Command.withDescription("generate a new API key for a user and print it once"))

const revokeKeyCommand = Command.make("revoke", { id: Args.text({ name: "ID" }) }, ({ id }) =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const info = yield* store.revokeKey(id)
    const revokedAt = Option.getOrElse(info.revokedAt, () => "now")
    yield* Console.log(`revoked API key ${info.id} of user ${info.userId} (at ${revokedAt})`)
  })
).pipe(Command.withDescription("revoke an API key by its id; it stops working at once"))

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): ReadonlyArray<string> => {
  const widths = rows.reduce<Array<number>>(
    (acc, row) => row.map((cell, column) => Math.max(acc[column] ?? 0, cell.length)),
    []
  )
  return rows.map((row) =>
    row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0))).join("  ")
  )
}

const keyRows = (keys: ReadonlyArray<OperatorStore.ApiKeyInfo>): ReadonlyArray<string> =>
  table([
    ["ID", "PREFIX", "USER", "CREATED", "REVOKED"],
    ...keys.map((key) => [
      key.id,
      Option.getOrElse(key.prefix, () => "-"),
      key.userId,
      key.createdAt,
      Option.getOrElse(key.revokedAt, () => "-")
    ])
  ])

const listKeysCommand = Command.make(
  "list",
  { user: userOption.pipe(Options.withDescription("only this user's keys"), Options.optional) },
  ({ user }) =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      if (Option.isSome(user) && !(yield* store.userExists(user.value))) {
        return yield* new OperatorStore.UserNotFound({ userId: user.value })
      }
      const keys = yield* store.listKeys(user)
      if (keys.length === 0) {
        return yield* Console.log("no API keys")
      }
      yield* Effect.forEach(keyRows(keys), (row) => Console.log(row))
    })
).pipe(
  Command.withDescription(
    "list API keys: ids, the first characters of keys of 32 or more (- for others), owners and dates"
  )
)

const findKeyCommand = Command.make("find", {}, () =>
  Effect.gen(function* () {
    const input = yield* Stdin.StandardInput
    if (input.isTTY) yield* Console.error("Paste the API key and press Enter:")
    const text = yield* input.readLine
    if (Option.isNone(text) || text.value === "") {
      return yield* new CliError.UsageError({
        detail: "key find reads the API key from stdin, e.g. filedata key find < leaked-key.txt"
      })
    }
    // Text against the text rules (U+0000 read from a file) was never accepted as a key, so none matches it.
    if (!TextRules.isNonEmptyText(text.value)) return yield* new CliError.NoMatchingKey()
    const store = yield* OperatorStore.OperatorStore
    const found = yield* store.findKey(Redacted.make(FileData.ApiKeyText.make(text.value)))
    if (Option.isNone(found)) return yield* new CliError.NoMatchingKey()
    yield* Effect.forEach(keyRows([found.value]), (row) => Console.log(row))
  })
).pipe(
  Command.withDescription(
    "read an API key from stdin and print its id, owner and state, so a leaked key can be revoked"
  )
)

const keyCommand = Command.make("key").pipe(
  Command.withDescription("manage API keys"),
  Command.withSubcommands([createKeyCommand, revokeKeyCommand, listKeysCommand, findKeyCommand])
)

// The URL without its query, which may hold a receiver's token: an operator needs where it goes, not that.
const shownUrl = (url: string): string => {
  const parsed = URL.parse(url)
  return parsed === null ? "-" : `${parsed.origin}${parsed.pathname}${parsed.search === "" ? "" : "?…"}`
}

const webhookRows = (webhooks: ReadonlyArray<Webhook.Webhook>): ReadonlyArray<string> =>
  table([
    ["ID", "FILE", "STATE", "CREATED", "URL"],
    ...webhooks.map((webhook) => [
      webhook.id,
      webhook.fileId,
      webhook.enabled ? "enabled" : `disabled (${Option.getOrElse(webhook.disabledReason, () => "-")})`,
      webhook.createdAt,
      shownUrl(webhook.url)
    ])
  ])

const listWebhooksCommand = Command.make(
  "list",
  {
    file: Options.text("file").pipe(
      Options.mapEffect(named("--file", FileData.FileId)),
      Options.withDescription("only this file's webhooks"),
      Options.optional
    )
  },
  ({ file }) =>
    Effect.gen(function* () {
      const webhooks = yield* (yield* WebhookStore.WebhookStore).listAll(file)
      if (webhooks.length === 0) return yield* Console.log("no webhooks")
      yield* Effect.forEach(webhookRows(webhooks), (row) => Console.log(row))
    })
).pipe(Command.withDescription("list webhooks: ids, files, state, creation and URL (without its query)"))

const disableWebhookCommand = Command.make("disable", { id: Args.text({ name: "ID" }) }, ({ id }) =>
  Effect.gen(function* () {
    const disabled = yield* (yield* WebhookStore.WebhookStore).disable(id, "operator")
    if (Option.isNone(disabled)) return yield* Effect.fail(new Error(`no webhook has the id ${JSON.stringify(id)}`))
    yield* Console.log(`disabled webhook ${disabled.value.id} of file ${disabled.value.fileId}`)
  })
).pipe(Command.withDescription("disable a webhook at once (disabledReason operator); its owner can enable it again"))

const webhookCommand = Command.make("webhook").pipe(
  Command.withDescription("see and disable webhooks"),
  Command.withSubcommands([listWebhooksCommand, disableWebhookCommand])
)

const createUserCommand = Command.make(
  "create",
  {
    id: Args.text({ name: "ID" }).pipe(
      Args.mapEffect(refusal("ID", FileData.UserId)),
      Args.withDescription("the new user's id, under a fixture's text rules: at most 256 characters")
    )
  },
  ({ id }) =>
    Effect.gen(function* () {
      const store = yield* OperatorStore.OperatorStore
      yield* store.createUser(id)
      yield* Console.log(`created user ${id}; give it a key with: filedata key create --user ${id}`)
    })
).pipe(Command.withDescription("create a user with no keys and no files"))

const listUsersCommand = Command.make("list", {}, () =>
  Effect.gen(function* () {
    const store = yield* OperatorStore.OperatorStore
    const users = yield* store.listUsers
    if (users.length === 0) {
      return yield* Console.log("no users")
    }
    const rows = table([
      ["ID", "KEYS", "FILES"],
      ...users.map((user) => [user.id, String(user.activeKeys), String(user.files)])
    ])
    yield* Effect.forEach(rows, (row) => Console.log(row))
  })
).pipe(Command.withDescription("list users by id, with their active (not revoked) API keys and their files"))

const userCommand = Command.make("user").pipe(
  Command.withDescription("manage users"),
  Command.withSubcommands([createUserCommand, listUsersCommand])
)

/**
 * The whole tree: `import`, `append`, `demo`, `user create|list` and `key create|revoke|list|find`.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(NAME).pipe(
  Command.withDescription("operator tool of the filedata service"),
  Command.withSubcommands([
    importCommand,
    appendCommand,
    exportCommand,
    demoCommand,
    userCommand,
    keyCommand,
    webhookCommand
  ])
)

const LOG_LEVEL = "--log-level"

const logLevelChoices = ServiceConfig.logLevelNames.join(", ")

/**
 * Takes `--log-level NAME` (or `--log-level=NAME`) out of the arguments, anywhere before `--`, with the
 * names `LOG_LEVEL` takes; @effect/cli's own option of that name knows Effect's names instead. The last one
 * given counts.
 *
 * @since 0.1.0
 * @category parsing
 */
export const takeLogLevel = (
  args: ReadonlyArray<string>
): Either.Either<
  { readonly args: ReadonlyArray<string>; readonly level: Option.Option<LogLevel.LogLevel> },
  CliError.UsageError
> => {
  const rest: Array<string> = []
  let name: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    if (arg === LOG_LEVEL) {
      name = args[i + 1]
      if (name === undefined) {
        return Either.left(new CliError.UsageError({ detail: `${LOG_LEVEL} needs a value: one of ${logLevelChoices}` }))
      }
      i++
    } else if (arg.startsWith(`${LOG_LEVEL}=`)) {
      name = arg.slice(LOG_LEVEL.length + 1)
    } else {
      rest.push(arg)
    }
  }
  if (name === undefined) return Either.right({ args: rest, level: Option.none() })
  return ServiceConfig.isLogLevelName(name)
    ? Either.right({ args: rest, level: Option.some(ServiceConfig.logLevels[name]) })
    : Either.left(
        new CliError.UsageError({
          detail: `${LOG_LEVEL}: expected one of ${logLevelChoices} but received ${JSON.stringify(name)}`
        })
      )
}

// @effect/cli's own options are hidden from help (its --log-level would show Effect's names); these are
// the ones that apply to every command.
const globalOptions = HelpDoc.sequence(
  HelpDoc.h1("GLOBAL OPTIONS"),
  HelpDoc.descriptionList([
    [
      Span.text(`${LOG_LEVEL} ${ServiceConfig.logLevelNames.join(" | ")}`),
      HelpDoc.p("the least level of the log lines written to stdout; overrides LOG_LEVEL")
    ],
    [Span.text("--help, -h"), HelpDoc.p("show the help of a command")],
    [Span.text("--version"), HelpDoc.p("show the version")],
    [Span.text("--completions sh | bash | fish | zsh"), HelpDoc.p("print a completion script for the shell")]
  ])
)

/**
 * Runs a command tree built from {@link command} on `argv` (with the runtime and script first, as in
 * `process.argv`), printing any failure to stderr. A wrong command line fails with exit code 2, a command
 * that fails with 1 (`CliError.exitCode`).
 *
 * @since 0.1.0
 * @category running
 */
export const run =
  <R, E, A>(tree: Command.Command<typeof NAME, R, E, A>) =>
  (argv: ReadonlyArray<string>) =>
    Effect.suspend(
      (): Effect.Effect<
        void,
        E | ValidationError.ValidationError | CliError.UsageError,
        R | CliApp.CliApp.Environment
      > => {
        const [runtime = "node", script = NAME, ...args] = argv
        const taken = takeLogLevel(args)
        if (Either.isLeft(taken)) return Effect.fail(taken.left)
        const cli = Command.run(tree, { name: NAME, version: VERSION, footer: globalOptions })([
          runtime,
          script,
          ...taken.right.args
        ]).pipe(Effect.provide(CliConfig.layer({ showBuiltIns: false })))
        return Option.match(taken.right.level, {
          onNone: () => cli,
          onSome: (level) => Logger.withMinimumLogLevel(cli, level)
        })
      }
    ).pipe(CliError.report)
