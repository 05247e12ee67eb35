/**
 * The command tree of `filedata`, assembled from the command groups of `commands/`, and how a command line is
 * run on it: the global `--log-level`, the help's footer, failures printed once. Handlers need only the storage
 * ports and the platform services of `NodeContext`, so tests run the tree in-process against a real database.
 *
 * @since 0.1.0
 */
import type * as CliApp from "@effect/cli/CliApp"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Span from "@effect/cli/HelpDoc/Span"
import type * as Usage from "@effect/cli/Usage"
import type * as ValidationError from "@effect/cli/ValidationError"
import type { FileRepository, Fixture, OperatorStore, WebhookStore } from "@filedata/core"
import { Environment, ServiceConfig } from "@filedata/runtime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as CliError from "./CliError.js"
import * as Demo from "./commands/demo.js"
import * as Erase from "./commands/erase.js"
import * as Export from "./commands/export.js"
import * as Import from "./commands/import.js"
import * as Key from "./commands/key.js"
import * as User from "./commands/user.js"
import * as Webhook from "./commands/webhook.js"

/**
 * Every failure a command of the tree can end with, besides @effect/cli's own `ValidationError`: each group's,
 * such as a refused fixture ({@link Fixture.FixtureInvalid}), which `CliError.report` prints by JSON path.
 *
 * @since 0.1.0
 * @category errors
 */
export type CommandError =
  | Import.Failure
  | Export.Failure
  | Demo.Failure
  | User.Failure
  | Key.Failure
  | Webhook.Failure
  | Erase.Failure

/**
 * The storage ports the commands use; `main` provides them from the configured storage, once a command runs.
 *
 * @since 0.2.0
 * @category models
 */
export type Services = OperatorStore.OperatorStore | FileRepository.FileRepository | WebhookStore.WebhookStore

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

const commands = [
  Import.importCommand,
  Import.appendCommand,
  Export.exportCommand,
  Demo.demoCommand,
  User.userCommand,
  Key.keyCommand,
  Webhook.webhookCommand,
  Erase.eraseCommand
] as const

/**
 * The whole tree: `import`, `append`, `export`, `demo`, `user create|list`, `key create|revoke|list|find`,
 * `webhook list|disable` and `erase`, each group in a module of `commands/`.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(NAME).pipe(
  Command.withDescription("operator tool of the filedata service"),
  Command.withSubcommands(commands)
)

const commandNames = (group: Descriptor.Command<unknown>): ReadonlyArray<string> =>
  Array.from(HashMap.keys(Descriptor.getSubcommands(group))).sort()

// The options of a usage that take no value (flags such as `demo --reset`), by every name they have.
const flagNames = (usage: Usage.Usage): ReadonlyArray<string> => {
  switch (usage._tag) {
    case "Named":
      return Option.isNone(usage.acceptedValues) ? usage.names.filter((name) => name.startsWith("-")) : []
    case "Optional":
    case "Repeated":
      return flagNames(usage.usage)
    case "Alternation":
    case "Concat":
      return [...flagNames(usage.left), ...flagNames(usage.right)]
    default:
      return []
  }
}

type Entry = { readonly commands: ReadonlyArray<string> } | { readonly flags: ReadonlyArray<string> }

const runs = (descriptor: Descriptor.Command<unknown>): Entry => ({ flags: flagNames(Descriptor.getUsage(descriptor)) })

// Each group by its words ("" for the top level, "key" for `key`'s) with the commands it takes, and each command
// that runs with its flags. A command that runs lists only itself among its commands.
const tree: ReadonlyMap<string, Entry> = new Map([
  ["", { commands: commandNames(command.descriptor) }],
  ...commands.flatMap((child) => {
    const descriptor: Descriptor.Command<unknown> = child.descriptor
    const name = Array.from(Descriptor.getNames(descriptor)).join(" ")
    const names = commandNames(descriptor)
    if (names.length === 1 && names[0] === name) return [[name, runs(descriptor)] as const]
    return [
      [name, { commands: names }] as const,
      ...Array.from(Descriptor.getSubcommands(descriptor), ([sub, leaf]) => [`${name} ${sub}`, runs(leaf)] as const)
    ]
  })
])

// The values @effect/cli takes for a flag given one (`--reset=yes`), exactly in this case; it reads any other as
// an unknown argument.
const flagValues = ["true", "false", "yes", "no", "on", "off", "1", "0", "y", "n"]

const unknownCommand = (words: ReadonlyArray<string>, arg: string, names: ReadonlyArray<string>) => {
  const group = [NAME, ...words].join(" ")
  const scored = names.map((name) => ({ name, edits: Environment.distance(arg, name) }))
  const nearest = scored.reduce((best, next) => (next.edits < best.edits ? next : best))
  const close = nearest.edits <= Math.ceil(nearest.name.length / 3)
  const unknown = `unknown command "${[...words, arg].join(" ")}"`
  return new CliError.UsageError({
    detail:
      `${close ? `${unknown}: did you mean "${[...words, nearest.name].join(" ")}"?` : unknown}\n` +
      `the commands of ${group}: ${names.join(", ")} (${group} --help describes them)`
  })
}

/**
 * What @effect/cli would refuse in words that do not point at the fix: a command word that names no command of
 * its group (`improt`, `key creat`), with the nearest name when one is within a third of its length in edits and
 * the group's own commands (@effect/cli lists the top level's, whatever the group); and a flag given a value it
 * does not take (`demo --reset=maybe`), with the values it takes. The command words end at the first option,
 * where @effect/cli decides (`--help`, `--version`); nothing after `--` is looked at.
 *
 * @since 0.2.0
 * @category parsing
 */
export const mistake = (args: ReadonlyArray<string>): Option.Option<CliError.UsageError> => {
  const words: Array<string> = []
  for (const arg of args) {
    const entry = tree.get(words.join(" "))
    if (arg === "--" || entry === undefined) return Option.none()
    if ("flags" in entry) {
      const [name = "", value] = arg.split(/=(.*)/s)
      if (value !== undefined && entry.flags.includes(name) && !flagValues.includes(value)) {
        return Option.some(
          new CliError.UsageError({
            detail: `${name}: takes no value, or one of ${flagValues.join(", ")}, but received ${JSON.stringify(value)}`
          })
        )
      }
    } else {
      if (arg.startsWith("-")) return Option.none()
      if (!entry.commands.includes(arg)) return Option.some(unknownCommand(words, arg, entry.commands))
      words.push(arg)
    }
  }
  return Option.none()
}

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
        const refused = mistake(taken.right.args)
        if (Option.isSome(refused)) return Effect.fail(refused.value)
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
