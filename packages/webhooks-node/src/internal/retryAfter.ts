import * as Option from "effect/Option"

/**
 * `Retry-After` in milliseconds from `nowMillis`: delay-seconds (digits only) or an HTTP date, a date already
 * past being 0. Anything else, or a value past the largest safe number of milliseconds, is `None`.
 */
export const parse = (value: string | undefined, nowMillis: number): Option.Option<number> => {
  if (value === undefined) return Option.none()
  const text = value.trim()
  if (/^\d+$/.test(text)) {
    const millis = Number(text) * 1000
    return Number.isSafeInteger(millis) ? Option.some(millis) : Option.none()
  }
  // An HTTP date always names its weekday or month in letters; plain numbers are handled above.
  if (!/[A-Za-z]/.test(text)) return Option.none()
  const at = Date.parse(text)
  return Number.isNaN(at) ? Option.none() : Option.some(Math.max(0, at - nowMillis))
}
