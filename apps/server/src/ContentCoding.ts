/**
 * Which content coding a reply is sent in, from the request's `Accept-Encoding` (RFC 9110, section 12.5.3):
 * `br`, `gzip`, or none (identity). Pure: no I/O, nothing of Node but the header's text.
 *
 * @since 0.1.0
 */

/**
 * A coding the service sends: `identity` is the body as it is, with no `Content-Encoding`.
 *
 * @since 0.1.0
 * @category models
 */
export type Coding = "br" | "gzip" | "identity"

/**
 * One element of an `Accept-Encoding` field value: a coding name (lower case, `*` included) and its weight.
 *
 * @since 0.1.0
 * @category models
 */
export interface Preference {
  readonly coding: string
  /** Thousandths, 0 to 1000: `q=0.5` is 500, no weight is 1000. */
  readonly q: number
}

// RFC 9110, section 5.6.2: a token.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
// RFC 9110, section 12.4.2: "0" [ "." 0*3DIGIT ] / "1" [ "." 0*3("0") ].
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

const OWS = /^[ \t]+|[ \t]+$/g

const element = (text: string): Preference | undefined => {
  const parts = text.split(";")
  const coding = (parts[0] as string).replace(OWS, "")
  if (!TOKEN.test(coding)) return undefined
  let q = 1000
  for (let i = 1; i < parts.length; i++) {
    const parameter = (parts[i] as string).replace(OWS, "")
    const equals = parameter.indexOf("=")
    const name = parameter.slice(0, equals).replace(OWS, "").toLowerCase()
    const value = parameter.slice(equals + 1).replace(OWS, "")
    // Only a weight may follow a coding, once.
    if (equals === -1 || name !== "q" || i > 1 || !QVALUE.test(value)) return undefined
    q = Math.round(Number(value) * 1000)
  }
  const name = coding.toLowerCase()
  // RFC 9110, section 8.4.1.3: "x-gzip" is "gzip".
  return { coding: name === "x-gzip" ? "gzip" : name, q }
}

/**
 * The elements of an `Accept-Encoding` field value, in order; an element that does not parse (a coding that
 * is not a token, a parameter other than one weight, a weight outside the grammar) is left out.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (field: string): ReadonlyArray<Preference> => {
  const out: Array<Preference> = []
  for (const text of field.split(",")) {
    if (text.trim() === "") continue
    const preference = element(text)
    if (preference !== undefined) out.push(preference)
  }
  return out
}

// The weight `preferences` give `coding`: its own element (the highest, if it is named twice), else `*`'s;
// undefined when neither is there.
const weightOf = (preferences: ReadonlyArray<Preference>, coding: string): number | undefined => {
  let own: number | undefined
  let any: number | undefined
  for (const preference of preferences) {
    if (preference.coding === coding) own = Math.max(own ?? 0, preference.q)
    else if (preference.coding === "*") any = Math.max(any ?? 0, preference.q)
  }
  return own ?? any
}

/**
 * Which of `br` and `gzip` wins when a client gives both the same weight; chosen by measurement
 * (docs/performance.md#compressed-replies).
 *
 * @since 0.1.0
 * @category constants
 */
export const preferred: ReadonlyArray<Exclude<Coding, "identity">> = ["br", "gzip"]

/**
 * The coding to send for a request's `Accept-Encoding` field value: the acceptable one of `br` and `gzip`
 * with the highest weight (ties: {@link preferred}), unless the client weighs identity higher. No field, an
 * empty one, or neither coding acceptable: identity, also when the client refuses identity (`identity;q=0`,
 * `*;q=0`): RFC 9110 lets the server disregard the field then, and the service does rather than answer 406.
 *
 * @since 0.1.0
 * @category negotiation
 */
export const negotiate = (field: string | ReadonlyArray<string> | undefined): Coding => {
  if (field === undefined) return "identity"
  const preferences = parse(typeof field === "string" ? field : field.join(","))
  if (preferences.length === 0) return "identity"
  let best: Coding = "identity"
  let bestQ = 0
  for (const coding of preferred) {
    const q = weightOf(preferences, coding) ?? 0
    if (q > bestQ) {
      best = coding
      bestQ = q
    }
  }
  if (best === "identity") return best
  // Identity not named is acceptable but the least wanted (RFC 9110, section 12.5.3): only a higher weight
  // of its own, or of `*` when it is not named, makes a client prefer it to a coding it accepts.
  const identity = weightOf(preferences, "identity")
  return identity !== undefined && identity > bestQ ? "identity" : best
}
