/**
 * The rules every text the service takes in obeys, decided once so that it means the same on every storage
 * adapter: ids (of files and users) have at most {@link maxIdLength} characters, and every text (ids,
 * names, API keys, content keys and values) is well-formed Unicode without U+0000. The request schema, the
 * fixture and the append document apply them, so storage never sees text it would keep differently (a lone
 * surrogate, which each driver replaces its own way), could not keep (U+0000 in PostgreSQL text) or could
 * not index (an id past the size of a btree index row). Why these limits: `docs/api.md#text-rules`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The most characters (Unicode code points) an id may have. At four UTF-8 bytes each, an id stays under
 * a quarter of what a PostgreSQL btree index row holds, composite indexes included.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxIdLength = 256

/**
 * The fixed texts the rules refuse with; none repeats the refused value.
 *
 * @since 0.1.0
 * @category constants
 */
export const messages = {
  notAString: "must be a string",
  empty: "must be a non-empty string",
  tooLong: `must be at most ${maxIdLength} characters`,
  nul: "must not contain the character U+0000",
  illFormed: "must be well-formed Unicode (no lone surrogate)"
} as const

const fixedTexts: ReadonlySet<string> = new Set(Object.values(messages))

/**
 * Whether `message` is one of the rules' own {@link messages}, which may be shown as they are.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isFixedMessage = (message: string): boolean => fixedTexts.has(message)

// `String.prototype.isWellFormed` is in Node 20 but not in the ES2023 library the project compiles against.
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed()

/**
 * Whether `text` is well-formed Unicode: no UTF-16 surrogate without its pair.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isWellFormed = (text: string): boolean => wellFormed(text)

/**
 * Whether `text` holds U+0000. Refused everywhere rather than kept: PostgreSQL text cannot hold it, and
 * whatever reads an id or a name as a C string stops there and sees another value.
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasNul = (text: string): boolean => text.includes("\u0000")

/**
 * Whether `text` obeys the rules of every text: well-formed, without U+0000.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isText = (text: string): boolean => !hasNul(text) && wellFormed(text)

/**
 * The number of Unicode code points of `text`, a surrogate pair counting once.
 *
 * @since 0.1.0
 * @category predicates
 */
export const codePoints = (text: string): number => {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
    }
    count++
  }
  return count
}

/**
 * Whether `text` is short enough for an id: at most {@link maxIdLength} code points. Counting is needed
 * only past that many UTF-16 code units.
 *
 * @since 0.1.0
 * @category predicates
 */
export const fitsId = (text: string): boolean => text.length <= maxIdLength || codePoints(text) <= maxIdLength

/**
 * Whether `text` is an id: non-empty, short enough, and a text.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isId = (text: string): boolean => text !== "" && fitsId(text) && isText(text)

/**
 * Whether `text` is a non-empty text, as an API key must be.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isNonEmptyText = (text: string): boolean => text !== "" && isText(text)

// JSON Schema has no word for either rule; the empty annotations keep the generator from skipping these
// refinements, and with them the descriptions given to the schemas built on them.
const textRules = <S extends Schema.Schema<string, string>>(self: S) =>
  self.pipe(
    Schema.filter((text) => !hasNul(text), { message: () => messages.nul, jsonSchema: {} }),
    Schema.filter(wellFormed, {
      message: () => messages.illFormed,
      description: "well-formed Unicode without U+0000",
      jsonSchema: {}
    })
  )

/**
 * Any text: a string, well-formed, without U+0000; for names, content keys and values.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Text = textRules(Schema.String.annotations({ message: () => messages.notAString }))

/**
 * A non-empty text; for API keys.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NonEmptyText = textRules(
  Schema.String.annotations({ message: () => messages.empty }).pipe(
    Schema.minLength(1, { message: () => messages.empty })
  )
)

/**
 * An id: a non-empty text of at most {@link maxIdLength} code points.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Id = textRules(
  Schema.String.annotations({ message: () => messages.empty }).pipe(
    Schema.minLength(1, { message: () => messages.empty }),
    Schema.filter(fitsId, { message: () => messages.tooLong, jsonSchema: { maxLength: maxIdLength } })
  )
)
