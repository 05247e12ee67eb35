/**
 * The part of an API key an operator may see: its first characters, kept when the key is created so a key
 * found in a log or a repository can be matched to its id without the key ever being stored. A generated key
 * (`fdk_` and 43 random base64url characters) shows `fdk_` and 4 random characters: 24 of its 256 bits. A
 * short key, such as one chosen by hand in a fixture, gets none, since its first characters may be much of
 * it (docs/security.md#key-prefixes).
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"

/**
 * How many characters a prefix has.
 *
 * @since 0.1.0
 * @category constants
 */
export const length = 8

/**
 * The shortest key that gets a prefix: at least 24 characters stay hidden.
 *
 * @since 0.1.0
 * @category constants
 */
export const minimumKeyLength = 32

// Printable ASCII without the space: a prefix is shown in a terminal, where a control character could do harm.
const SHOWN = /^[\x21-\x7e]+$/

/**
 * The prefix kept for a key's text, or none when the key is too short, or its first characters are not all
 * printable ASCII.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromText = (text: string): Option.Option<string> => {
  const head = text.slice(0, length)
  return text.length >= minimumKeyLength && SHOWN.test(head) ? Option.some(head) : Option.none()
}
