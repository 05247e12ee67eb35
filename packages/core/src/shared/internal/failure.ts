import * as Schema from "effect/Schema"

/**
 * `Schema.TaggedError` whose `message` is the sentence logs and replies show, fixed or made from the fields, in
 * place of the `{ field: value }` one it has by default.
 *
 * @internal
 */
export const withMessage =
  <Self>() =>
  <Tag extends string, Fields extends Schema.Struct.Fields>(
    tag: Tag,
    fields: Fields,
    message: string | ((failure: Schema.Struct.Type<Fields>) => string)
  ): Schema.TaggedErrorClass<Self, Tag, { readonly _tag: Schema.tag<Tag> } & Fields> => {
    // `Self` is still a parameter here, so the compiler cannot tell it is not `never`.
    const Failure: Schema.TaggedErrorClass<Self, Tag, { readonly _tag: Schema.tag<Tag> } & Fields> =
      Schema.TaggedError<Self>()(tag, fields) as never
    // Replaces the default the way `Schema.TaggedError` defines it: a getter, not enumerable, as `Error`'s own.
    Object.defineProperty(Failure.prototype, "message", {
      get(this: Schema.Struct.Type<Fields>) {
        return typeof message === "string" ? message : message(this)
      },
      enumerable: false,
      configurable: true
    })
    return Failure
  }
