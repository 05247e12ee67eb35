/**
 * An incremental JSON tokenizer. Text arrives in chunks cut anywhere, even inside a string or an escape, and
 * each token goes to a handler as soon as it is complete, so a document of any size is read in the memory of
 * its longest string. It checks the grammar of RFC 8259 and reads strings and numbers as `JSON.parse` does.
 *
 * @internal
 */

/**
 * Receives the tokens of a document in order. The tokenizer has checked the grammar, so every `key` is
 * followed by that member's value and every start by its end.
 *
 * @internal
 */
export interface JsonHandler {
  readonly startObject: () => void
  readonly key: (name: string) => void
  readonly endObject: () => void
  readonly startArray: () => void
  readonly endArray: () => void
  readonly value: (value: string | number | boolean | null) => void
}

/**
 * Where and why the text stops being JSON. Line and column count from 1, the column in UTF-16 code units.
 *
 * @internal
 */
export class JsonSyntaxError {
  constructor(
    readonly detail: string,
    readonly line: number,
    readonly column: number
  ) {}
}

// What may come next, by the grammar.
const VALUE = 0
const VALUE_OR_END = 1
const KEY_OR_END = 2
const KEY = 3
const COLON = 4
const COMMA_OR_END = 5
const DONE = 6

// What the tokenizer is in the middle of when a chunk ends.
const BETWEEN = 0
const STRING = 1
const ESCAPE = 2
const UNICODE = 3
const NUMBER = 4
const LITERAL = 5

const OBJECT = 0
const ARRAY = 1

const NUMBER_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/
const HEX_DIGIT = /^[0-9a-fA-F]$/
const ESCAPED: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }

const isNumberChar = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x45 || c === 0x65
const isLetter = (c: number): boolean => c >= 0x61 && c <= 0x7a

const describe = (char: string): string => {
  const code = char.charCodeAt(0)
  return code < 0x20 || code === 0x7f ? `U+${code.toString(16).toUpperCase().padStart(4, "0")}` : JSON.stringify(char)
}

/**
 * @internal
 */
export class JsonTokenizer {
  private expect = VALUE
  private mode = BETWEEN
  private readonly containers: Array<number> = []
  private isKey = false
  /** The text of the token in progress: a string's characters so far, a number's or a literal's. */
  private partial = ""
  private hex = ""
  /** Offset of the current chunk in the document, and of the line and the token in progress. */
  private offset = 0
  private line = 1
  private lineStart = 0
  private tokenStart = 0

  constructor(private readonly handler: JsonHandler) {}

  /** Reads the next chunk of the document. */
  write(text: string): JsonSyntaxError | undefined {
    try {
      let i = 0
      while (i < text.length) {
        switch (this.mode) {
          case STRING:
            i = this.string(text, i)
            break
          case ESCAPE:
          case UNICODE:
            i = this.escape(text, i)
            break
          case NUMBER:
            i = this.number(text, i)
            break
          case LITERAL:
            i = this.literal(text, i)
            break
          default:
            i = this.between(text, i)
        }
      }
      this.offset += text.length
      return undefined
    } catch (error) {
      if (error instanceof JsonSyntaxError) return error
      throw error
    }
  }

  /** Ends the document: a number or literal at its very end is complete, anything else still open is an error. */
  end(): JsonSyntaxError | undefined {
    try {
      if (this.mode === NUMBER) this.endNumber()
      else if (this.mode === LITERAL) this.endLiteral()
      else if (this.mode !== BETWEEN) this.fail("the document ends inside a string", this.tokenStart)
      if (this.expect !== DONE) this.fail(`unexpected end of the document, expected ${this.expected()}`, this.offset)
      return undefined
    } catch (error) {
      if (error instanceof JsonSyntaxError) return error
      throw error
    }
  }

  private fail(detail: string, at: number): never {
    throw new JsonSyntaxError(detail, this.line, at - this.lineStart + 1)
  }

  private expected(): string {
    switch (this.expect) {
      case VALUE:
        return "a value"
      case VALUE_OR_END:
        return "a value or ]"
      case KEY_OR_END:
        return "a string key or }"
      case KEY:
        return "a string key"
      case COLON:
        return ":"
      case COMMA_OR_END:
        return this.containers[this.containers.length - 1] === OBJECT ? ", or }" : ", or ]"
      default:
        return "the end of the document"
    }
  }

  private unexpected(text: string, i: number): never {
    return this.fail(`unexpected ${describe(text.charAt(i))}, expected ${this.expected()}`, this.offset + i)
  }

  private startValue(text: string, i: number): void {
    if (this.expect !== VALUE && this.expect !== VALUE_OR_END) this.unexpected(text, i)
  }

  private afterValue(): void {
    this.expect = this.containers.length === 0 ? DONE : COMMA_OR_END
  }

  /** Whitespace and the one-character tokens; the start of a string, number or literal. */
  private between(text: string, i: number): number {
    const c = text.charCodeAt(i)
    switch (c) {
      case 0x20:
      case 0x09:
      case 0x0d:
        return i + 1
      case 0x0a:
        this.line++
        this.lineStart = this.offset + i + 1
        return i + 1
      case 0x7b: // {
        this.startValue(text, i)
        this.containers.push(OBJECT)
        this.expect = KEY_OR_END
        this.handler.startObject()
        return i + 1
      case 0x5b: // [
        this.startValue(text, i)
        this.containers.push(ARRAY)
        this.expect = VALUE_OR_END
        this.handler.startArray()
        return i + 1
      case 0x7d: // }
        if (!(this.expect === KEY_OR_END || (this.expect === COMMA_OR_END && this.inside(OBJECT)))) {
          this.unexpected(text, i)
        }
        this.containers.pop()
        this.afterValue()
        this.handler.endObject()
        return i + 1
      case 0x5d: // ]
        if (!(this.expect === VALUE_OR_END || (this.expect === COMMA_OR_END && this.inside(ARRAY)))) {
          this.unexpected(text, i)
        }
        this.containers.pop()
        this.afterValue()
        this.handler.endArray()
        return i + 1
      case 0x2c: // ,
        if (this.expect !== COMMA_OR_END) this.unexpected(text, i)
        this.expect = this.inside(OBJECT) ? KEY : VALUE
        return i + 1
      case 0x3a: // :
        if (this.expect !== COLON) this.unexpected(text, i)
        this.expect = VALUE
        return i + 1
      case 0x22: // "
        this.isKey = this.expect === KEY_OR_END || this.expect === KEY
        if (!this.isKey) this.startValue(text, i)
        this.mode = STRING
        this.partial = ""
        this.tokenStart = this.offset + i
        return i + 1
      default:
        this.startValue(text, i)
        this.tokenStart = this.offset + i
        this.partial = ""
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) this.mode = NUMBER
        else if (isLetter(c)) this.mode = LITERAL
        else this.unexpected(text, i)
        return i
    }
  }

  private inside(kind: number): boolean {
    return this.containers[this.containers.length - 1] === kind
  }

  private string(text: string, i: number): number {
    const start = i
    let c = 0
    // The hot loop: most of a fixture is plain string characters.
    for (; i < text.length; i++) {
      c = text.charCodeAt(i)
      if (c === 0x22 || c === 0x5c || c < 0x20) break
    }
    this.partial += text.slice(start, i)
    if (i === text.length) return i
    if (c === 0x22) {
      this.mode = BETWEEN
      const value = this.partial
      this.partial = ""
      if (this.isKey) {
        this.expect = COLON
        this.handler.key(value)
      } else {
        this.afterValue()
        this.handler.value(value)
      }
      return i + 1
    }
    if (c === 0x5c) {
      this.mode = ESCAPE
      return i + 1
    }
    return this.fail(`unescaped control character ${describe(text.charAt(i))} in a string`, this.offset + i)
  }

  private escape(text: string, i: number): number {
    if (this.mode === ESCAPE) {
      const char = text.charAt(i)
      if (char === "u") {
        this.mode = UNICODE
        this.hex = ""
        return i + 1
      }
      const escaped = ESCAPED[char]
      if (escaped === undefined) return this.fail(`invalid escape \\${char} in a string`, this.offset + i - 1)
      this.partial += escaped
      this.mode = STRING
      return i + 1
    }
    while (i < text.length && this.hex.length < 4) {
      const char = text.charAt(i)
      if (!HEX_DIGIT.test(char))
        return this.fail(`invalid hexadecimal digit ${describe(char)} in a \\u escape`, this.offset + i)
      this.hex += char
      i++
    }
    if (this.hex.length === 4) {
      this.partial += String.fromCharCode(Number.parseInt(this.hex, 16))
      this.mode = STRING
    }
    return i
  }

  private number(text: string, i: number): number {
    const start = i
    while (i < text.length && isNumberChar(text.charCodeAt(i))) i++
    this.partial += text.slice(start, i)
    if (i < text.length) this.endNumber()
    return i
  }

  private endNumber(): void {
    const token = this.partial
    if (!NUMBER_TEXT.test(token)) this.fail(`invalid number ${JSON.stringify(token)}`, this.tokenStart)
    this.mode = BETWEEN
    this.afterValue()
    this.handler.value(Number(token))
  }

  private literal(text: string, i: number): number {
    const start = i
    while (i < text.length && isLetter(text.charCodeAt(i))) i++
    this.partial += text.slice(start, i)
    if (i < text.length) this.endLiteral()
    return i
  }

  private endLiteral(): void {
    const token = this.partial
    const value = token === "true" ? true : token === "false" ? false : token === "null" ? null : undefined
    if (value === undefined)
      this.fail(`unexpected ${JSON.stringify(token)}, expected ${this.expected()}`, this.tokenStart)
    this.mode = BETWEEN
    this.afterValue()
    this.handler.value(value)
  }
}

/**
 * Sets a member the way `JSON.parse` does: `__proto__` becomes an own key, where assigning it would set the
 * prototype.
 *
 * @internal
 */
export const setMember = (object: Record<string, unknown>, key: string, value: unknown): void => {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    object[key] = value
  }
}

/**
 * Builds the value of one JSON value's tokens as `JSON.parse` would: own `__proto__` keys, the last of
 * duplicate keys wins. Each method answers whether the value is complete; `result` then holds it.
 *
 * @internal
 */
export class JsonValueBuilder {
  result: unknown = undefined
  private readonly containers: Array<Record<string, unknown> | Array<unknown>> = []
  private readonly keys: Array<string> = []

  startObject(): void {
    this.containers.push({})
    this.keys.push("")
  }

  startArray(): void {
    this.containers.push([])
    this.keys.push("")
  }

  key(name: string): void {
    this.keys[this.keys.length - 1] = name
  }

  end(): boolean {
    this.keys.pop()
    return this.value(this.containers.pop())
  }

  value(value: unknown): boolean {
    const depth = this.containers.length
    if (depth === 0) {
      this.result = value
      return true
    }
    const container = this.containers[depth - 1]
    if (Array.isArray(container)) container.push(value)
    else if (container !== undefined) setMember(container, this.keys[depth - 1] ?? "", value)
    return false
  }
}

/**
 * Passes over one JSON value's tokens; like {@link JsonValueBuilder}, each method answers whether it is over.
 *
 * @internal
 */
export class JsonValueSkipper {
  private depth = 0

  startObject(): void {
    this.depth++
  }

  startArray(): void {
    this.depth++
  }

  key(): void {}

  end(): boolean {
    this.depth--
    return this.depth === 0
  }

  value(): boolean {
    return this.depth === 0
  }
}
