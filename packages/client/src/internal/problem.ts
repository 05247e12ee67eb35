import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { ProblemCode } from "@filedata/core"
import * as Schema from "effect/Schema"

/** @internal */
export type TaggedErrorSchema<A, I, P> = Schema.Schema<A, I> & {
  readonly _tag: string
  readonly fields: Schema.Struct.Fields
  new (props: P): A
}

/**
 * The problem document of a typed failure: the class's fields without `_tag` on the wire, decoded into an
 * instance of the class, sent as `application/problem+json` with the status of the example's code;
 * `example` is shown in the OpenAPI document.
 *
 * @internal
 */
export const problem = <A extends { readonly _tag: string }, I extends { readonly _tag: string }, P>(
  error: TaggedErrorSchema<A, I, P>,
  description: string,
  example: { readonly code: ProblemCode.ProblemCode; readonly detail: string; readonly [extension: string]: unknown }
): Schema.Schema<A, Omit<I, "_tag">> => {
  const { _tag, ...fields } = error.fields
  const { code, detail, ...extensions } = example
  const document = {
    type: ProblemCode.type(code),
    title: ProblemCode.table[code].title,
    status: ProblemCode.status(code),
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
    schema.annotations(HttpApiSchema.annotations({ status: ProblemCode.status(code) }))
  ) as unknown as Schema.Schema<A, Omit<I, "_tag">>
}
