/**
 * Finds member names that appear more than once in one object of a JSON text. `JSON.parse` keeps the last
 * of them, while a proxy or a firewall in front may read the first, so the two would see different
 * requests; I-JSON (RFC 7493) forbids them. See `docs/security.md#threat-model`.
 *
 * @since 0.1.0
 */
import { FileDataError } from "@filedata/core"

/**
 * The duplicates of a text: the JSON Pointer of each (a name repeated in one object counts once), as many as
 * `FileDataError.invalidRequest` would list, and how many more there are.
 *
 * @since 0.1.0
 * @category models
 */
export interface Duplicates {
  readonly pointers: ReadonlyArray<string>
  readonly unlisted: number
}

// The characters the scan acts on, by their UTF-16 code.
const code = {
  quote: 0x22,
  backslash: 0x5c,
  comma: 0x2c,
  openObject: 0x7b,
  closeObject: 0x7d,
  openArray: 0x5b,
  closeArray: 0x5d
} as const

// The index of the quote that closes the string opening at `start`.
const stringEnd = (text: string, start: number): number => {
  let end = text.indexOf('"', start + 1)
  for (;;) {
    let backslashes = 0
    while (text.charCodeAt(end - 1 - backslashes) === code.backslash) backslashes++
    if (backslashes % 2 === 0) return end
    end = text.indexOf('"', end + 1)
  }
}

/**
 * The duplicate members of `text`, a JSON text that `JSON.parse` read as `parsed`; `undefined` when there
 * are none. Names are compared as `JSON.parse` reads them, escapes resolved (`"a"` and `"\u0061"` are one).
 *
 * @since 0.1.0
 * @category checks
 */
export const find = (text: string, parsed: unknown): Duplicates | undefined =>
  typeof parsed !== "object" || parsed === null || !mayRepeat(text, parsed) ? undefined : scan(text)

// A name can only repeat where the text has more members than the parsed value has keys. Every member has
// one colon outside strings, so a text with no more colons than a flat object's keys (the request nearly
// every client sends) has none to spare, and is answered without reading the text character by character.
const mayRepeat = (text: string, parsed: object): boolean => {
  let colons = 0
  for (let at = text.indexOf(":"); at !== -1; at = text.indexOf(":", at + 1)) colons++
  if (colons < 2) return false
  if (Array.isArray(parsed)) return true
  let keys = 0
  for (const key in parsed) {
    const value = (parsed as Record<string, unknown>)[key]
    if (typeof value === "object" && value !== null) return true
    keys++
  }
  return colons > keys
}

/**
 * The duplicate members of a valid JSON text, read in one pass with a stack of the objects and arrays
 * around the current position; `undefined` when there are none.
 *
 * @since 0.1.0
 * @category checks
 */
export const scan = (text: string): Duplicates | undefined => {
  // One slot per depth, reused: whether it is an object, its current member name or array index, and the
  // names seen so far (a set only from an object's second member on), with those already reported.
  const isObject: Array<boolean> = []
  const tokens: Array<string | number> = []
  const first: Array<string | undefined> = []
  const seen: Array<Set<string> | undefined> = []
  const reported: Array<Set<string> | undefined> = []
  let depth = -1
  let expectName = false
  const pointers: Array<string> = []
  let unlisted = 0
  let characters = 0
  let listing = true

  const duplicate = () => {
    if (listing) {
      const pointer = FileDataError.pointer(...tokens.slice(0, depth + 1))
      characters += pointer.length
      listing =
        pointers.length < FileDataError.issueLimit &&
        (pointers.length === 0 || characters <= FileDataError.pointerBudget)
      if (listing) {
        pointers.push(pointer)
        return
      }
    }
    unlisted++
  }

  const member = (name: string) => {
    tokens[depth] = name
    const firstName = first[depth]
    if (firstName === undefined) {
      first[depth] = name
      return
    }
    let names = seen[depth]
    if (names === undefined) {
      names = new Set([firstName])
      seen[depth] = names
    }
    if (!names.has(name)) {
      names.add(name)
      return
    }
    let done = reported[depth]
    if (done === undefined) {
      done = new Set()
      reported[depth] = done
    }
    if (done.has(name)) return
    done.add(name)
    duplicate()
  }

  const open = (object: boolean) => {
    depth++
    isObject[depth] = object
    tokens[depth] = 0
    first[depth] = undefined
    seen[depth] = undefined
    reported[depth] = undefined
    expectName = object
  }

  for (let i = 0; i < text.length; i++) {
    switch (text.charCodeAt(i)) {
      case code.quote: {
        const end = stringEnd(text, i)
        if (expectName) {
          const raw = text.slice(i + 1, end)
          member(raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw)
          expectName = false
        }
        i = end
        break
      }
      case code.openObject:
        open(true)
        break
      case code.openArray:
        open(false)
        break
      case code.closeObject:
      case code.closeArray:
        depth--
        expectName = false
        break
      case code.comma:
        if (isObject[depth] === true) expectName = true
        else tokens[depth] = (tokens[depth] as number) + 1
        break
    }
  }
  return pointers.length === 0 ? undefined : { pointers, unlisted }
}
