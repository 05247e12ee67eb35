/**
 * The request members every operation on a file shares and the request as the API's document shows it: the
 * encoded side of a request schema, refused exactly when the operation's own strict reading refuses it.
 *
 * @since 0.2.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { ApiKeyText, FileId } from "./FileData.js"
import type { InvalidRequest } from "./FileDataError.js"
import type { Credentials } from "./FileRequest.js"

/**
 * The `fileId` member of a request: an id (`FileData.FileId`), described by `description` in the API's
 * document.
 *
 * @since 0.2.0
 * @category schemas
 */
export const fileIdField = (description: string) =>
  FileId.annotations({ title: "File id", description, examples: [FileId.make("demo-contact-form")] })

/**
 * The `apiKey` member of a request: a non-empty text, decoded into `Redacted` (`FileData.ApiKey`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const apiKeyField = Schema.Redacted(
  ApiKeyText.annotations({
    title: "API key",
    description:
      "The caller's API key (`pnpm filedata demo` prints one); it travels only in this body. Well-formed Unicode " +
      "without U+0000",
    examples: [ApiKeyText.make("fdk_...")]
  })
)

/**
 * How many items a paged reply (the incremental read, the change feed) holds when the request gives no `limit`.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultLimit = 1000

/**
 * The largest `limit` a paged request may give.
 *
 * @since 0.3.0
 * @category constants
 */
export const maxLimit = 10_000

/**
 * The longest `wait` (long poll) a request may give, in seconds.
 *
 * @since 0.3.0
 * @category constants
 */
export const maxWait = 30

/**
 * The `limit` member of a paged request, of `items` (submissions, changes), default {@link defaultLimit}.
 *
 * @since 0.3.0
 * @category schemas
 */
export const limitField = (items: string, example: number) =>
  Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1, maxLimit)).annotations({
      title: "Limit",
      description: `At most this many ${items}, 1 to ${maxLimit}; default ${defaultLimit}`,
      examples: [example]
    }),
    { exact: true, default: () => defaultLimit }
  )

/**
 * The `wait` member of a request that may wait (the long poll), described by `description`; default 0.
 *
 * @since 0.3.0
 * @category schemas
 */
export const waitField = (description: string) =>
  Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(0, maxWait)).annotations({
      title: "Wait",
      description,
      examples: [0]
    }),
    { exact: true, default: () => 0 }
  )

/**
 * What the `limit` and `wait` members of a paged request are told when wrong: fixed texts.
 *
 * @since 0.3.0
 * @category constants
 */
export const pagingDetails = {
  limit: `must be an integer from 1 to ${maxLimit}`,
  wait: `must be an integer from 0 to ${maxWait}`
} as const

/**
 * The annotation by which a {@link wire} schema carries its operation's own reading, so a client can refuse a
 * body exactly as the server would, with the same issues.
 *
 * @since 0.2.0
 * @category annotations
 */
export const ParseId: unique symbol = Symbol.for("@filedata/core/RequestSchema/Parse")

/**
 * A request as a client sends it: the encoded side of `schema` (plain strings and numbers, its checks and
 * annotations kept for the API's document), refused exactly when `parse`, the operation's own reading (which
 * is synchronous), refuses it, with the refusal's message.
 *
 * @since 0.2.0
 * @category schemas
 */
export const wire = <A, I, R extends Credentials>(
  schema: Schema.Schema<A, I>,
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>
): Schema.Schema<I> =>
  Schema.encodedBoundSchema(schema).pipe(
    Schema.filter((body) => {
      const exit = Effect.runSyncExit(parse(body))
      return (
        Exit.isSuccess(exit) ||
        Cause.failureOption(exit.cause).pipe(
          Option.match({
            onNone: () => "cannot be read",
            onSome: (refusal) => refusal.message
          })
        )
      )
    }),
    (wired) =>
      wired.annotations({
        ...Option.match(SchemaAST.getIdentifierAnnotation(schema.ast), {
          onNone: () => ({}),
          onSome: (identifier) => ({ identifier })
        }),
        parseOptions: { onExcessProperty: "error" },
        [ParseId]: parse
      })
  )

/**
 * `schema`, the request as a client sends it, marked with `parse`, its operation's own reading ({@link getParse}),
 * for a request whose schema is not a {@link wire} one.
 *
 * @since 0.2.0
 * @category annotations
 */
export const readBy = <I>(
  schema: Schema.Schema<I>,
  parse: (body: unknown) => Effect.Effect<unknown, InvalidRequest>
): Schema.Schema<I> => schema.annotations({ [ParseId]: parse })

/**
 * The operation's own reading of the bodies of `schema`, if it is marked with one ({@link wire}, {@link readBy}).
 *
 * @since 0.2.0
 * @category annotations
 */
export const getParse = (
  schema: Schema.Schema.Any
): Option.Option<(body: unknown) => Effect.Effect<unknown, InvalidRequest>> =>
  SchemaAST.getAnnotation<(body: unknown) => Effect.Effect<unknown, InvalidRequest>>(ParseId)(schema.ast)
