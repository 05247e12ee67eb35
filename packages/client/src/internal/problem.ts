import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { ProblemCode } from "@filedata/core"
import * as Schema from "effect/Schema"
import * as ProblemStatus from "../ProblemStatus.js"

/** @internal */
export type TaggedErrorSchema<A, I, P> = Schema.Schema<A, I> & {
  readonly _tag: string
  readonly fields: Schema.Struct.Fields
  new (props: P): A
}

// The codes whose entry in the table has an example: those of the problems the OpenAPI document shows.
type ExampleCode = {
  [C in ProblemCode.ProblemCode]: (typeof ProblemCode.table)[C] extends { readonly example: object } ? C : never
}[ProblemCode.ProblemCode]

/**
 * The problem document of a typed failure: the class's fields without `_tag` on the wire, decoded into an
 * instance of the class, sent as `application/problem+json` with the status of `code`, one of the failure's
 * codes; the table's description (else `when`) and example of `code` are shown in the OpenAPI document.
 *
 * @internal
 */
export const problem = <
  A extends { readonly _tag: string },
  I extends { readonly _tag: string; readonly code: ProblemCode.ProblemCode },
  P
>(
  error: TaggedErrorSchema<A, I, P>,
  code: Extract<I["code"], ExampleCode>
): Schema.Schema<A, Omit<I, "_tag">> => {
  const { _tag, ...fields } = error.fields
  const entry: (typeof ProblemCode.table)[ExampleCode] = ProblemCode.table[code]
  const description = "description" in entry ? entry.description : entry.when
  const { detail, ...extensions } = entry.example
  const document = {
    type: ProblemCode.type(code),
    title: entry.title,
    status: ProblemStatus.status(code),
    detail,
    code,
    ...extensions
  }
  const wire = Schema.Struct(fields).annotations({
    description: `RFC 9457 problem details: ${description}`,
    examples: [document as never]
  })
  return Schema.transform(wire, Schema.typeSchema(error), {
    strict: false,
    decode: (document) => new error(document as P),
    encode: ({ _tag, ...document }: { readonly _tag: string }) => document
  }).pipe(HttpApiSchema.withEncoding({ kind: "Json", contentType: "application/problem+json" }), (schema) =>
    schema.annotations(HttpApiSchema.annotations({ status: ProblemStatus.status(code) }))
  ) as unknown as Schema.Schema<A, Omit<I, "_tag">>
}
