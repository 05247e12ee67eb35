/**
 * Reads a fixture document as it arrives, in chunks cut anywhere, and hands out its entries as soon as each
 * is complete: users, files' metadata, and submissions in bounded batches. Memory is bounded by the batch
 * size and the largest single entry, never by the size of the document; only users, files' metadata and the
 * ids and keys already seen are kept. Each entry is decoded with the same schemas as a whole fixture
 * (`Fixture.decode`), so it gets the same defaults and its problems are named by the same JSON paths.
 *
 * The document's members may come in any order (`users` after `files`, a file's `id` after its
 * `submissions`). Where a whole-document parse would silently keep the last of two `users`, `files` or
 * `submissions` members, the reader refuses the second: it has already handed out the first.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Fixture from "./Fixture.js"
import {
  type JsonHandler,
  JsonTokenizer,
  JsonValueBuilder,
  JsonValueSkipper,
  setMember
} from "./internal/jsonTokenizer.js"

/**
 * The text is not JSON; nothing of it may be imported.
 *
 * @since 0.1.0
 * @category errors
 */
export class FixtureMalformed extends Schema.TaggedError<FixtureMalformed>()("FixtureMalformed", {
  line: Schema.Number,
  column: Schema.Number,
  detail: Schema.String
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return `${this.detail} at line ${this.line}, column ${this.column}`
  }
}

/**
 * Submissions per batch unless told otherwise.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBatchSize = 1000

/**
 * Issues listed at most; further ones are only counted (`FixtureInvalid.omitted`).
 *
 * @since 0.1.0
 * @category constants
 */
export const issueLimit = 1000

/**
 * @since 0.1.0
 * @category models
 */
export interface ReadOptions {
  /** Submissions per `Submissions` entry, at most. */
  readonly batchSize?: number | undefined
}

// Where the reader stands in the fixture's structure. Inside an entry, a sink takes the tokens instead.
const TOP = 0 // before the document
const DOCUMENT = 1 // in the root object, between members
const DOCUMENT_MEMBER = 2 // after a key of the root object
const USERS = 3 // in $.users, between entries
const FILES = 4 // in $.files, between entries
const FILE = 5 // in a file's object, between members
const FILE_MEMBER = 6 // after a key of a file's object
const SUBMISSIONS = 7 // in a file's submissions, between entries
const END = 8

const issue = (path: ReadonlyArray<PropertyKey>, detail: string) =>
  new Fixture.FixtureIssue({ path: Fixture.jsonPath(path), detail })

const documentIssues = (document: unknown): ReadonlyArray<Fixture.FixtureIssue> =>
  Either.match(Fixture.decodeEither(document), { onLeft: (issues) => issues, onRight: () => [] })

class Reader implements JsonHandler {
  private readonly tokenizer = new JsonTokenizer(this)
  private readonly builder = new JsonValueBuilder()
  private readonly skipper = new JsonValueSkipper()
  private sink: JsonValueBuilder | JsonValueSkipper | undefined = undefined
  private place = TOP
  private member = ""
  private readonly rootMembers = new Set<string>()
  private users = 0
  /** Index of the file being read, and so the number of files read before it. */
  private file = 0
  private header: Record<string, unknown> = {}
  private hasSubmissions = false
  private submissions = 0
  private readonly duplicates = Fixture.makeDuplicateCheck()
  private readonly issues: Array<Fixture.FixtureIssue> = []
  private omitted = 0
  /** Once anything is refused, nothing more is handed out; the rest is still read to name every problem. */
  private refused = false
  private entries: Array<Fixture.FixtureEntry> = []
  private batch: Array<Fixture.FileSubmission> = []

  constructor(private readonly batchSize: number) {}

  write(text: string): Either.Either<Array<Fixture.FixtureEntry>, FixtureMalformed> {
    const error = this.tokenizer.write(text)
    return error === undefined ? Either.right(this.take()) : Either.left(new FixtureMalformed(error))
  }

  end(): Either.Either<Array<Fixture.FixtureEntry>, FixtureMalformed | Fixture.FixtureInvalid> {
    const error = this.tokenizer.end()
    if (error !== undefined) return Either.left(new FixtureMalformed(error))
    // As for a whole document, duplicates are reported only for a fixture whose every entry decodes.
    if (this.issues.length === 0 && this.omitted === 0) this.refuse(this.duplicates.issues())
    if (this.refused) return Either.left(new Fixture.FixtureInvalid({ issues: this.issues, omitted: this.omitted }))
    this.flush()
    return Either.right(this.take())
  }

  private take(): Array<Fixture.FixtureEntry> {
    const entries = this.entries
    this.entries = []
    return entries
  }

  private emit(entry: Fixture.FixtureEntry): void {
    if (!this.refused) this.entries.push(entry)
  }

  private flush(): void {
    if (this.batch.length === 0) return
    this.emit(Fixture.FixtureEntry.Submissions({ submissions: this.batch }))
    this.batch = []
  }

  private refuse(issues: ReadonlyArray<Fixture.FixtureIssue>): void {
    for (const found of issues) {
      if (this.issues.length < issueLimit) this.issues.push(found)
      else this.omitted++
      this.refused = true
    }
  }

  private build(): JsonValueBuilder {
    this.sink = this.builder
    return this.builder
  }

  private skip(path: ReadonlyArray<PropertyKey>, detail: string): void {
    this.refuse([issue(path, detail)])
    this.sink = this.skipper
  }

  // Tokens: routed to the sink inside an entry, else they move the reader through the structure.

  startObject(): void {
    if (this.sink !== undefined) {
      this.sink.startObject()
      return
    }
    if (this.place === TOP) {
      this.place = DOCUMENT
    } else if (this.place === FILES) {
      this.place = FILE
      this.header = {}
      this.hasSubmissions = false
      this.submissions = 0
    } else {
      this.build().startObject()
    }
  }

  startArray(): void {
    if (this.sink !== undefined) {
      this.sink.startArray()
      return
    }
    if (this.place === DOCUMENT_MEMBER) {
      this.place = this.member === "users" ? USERS : FILES
    } else if (this.place === FILE_MEMBER && this.member === "submissions") {
      this.place = SUBMISSIONS
    } else {
      this.build().startArray()
    }
  }

  key(name: string): void {
    if (this.sink !== undefined) {
      this.sink.key(name)
      return
    }
    this.member = name
    if (this.place === DOCUMENT) {
      this.place = DOCUMENT_MEMBER
      if (name !== "users" && name !== "files") this.skip([name], "is not allowed")
      else if (this.rootMembers.has(name)) this.skip([name], "appears twice")
      this.rootMembers.add(name)
    } else {
      this.place = FILE_MEMBER
      if (name === "submissions") {
        if (this.hasSubmissions) this.skip(["files", this.file, name], "appears twice")
        this.hasSubmissions = true
      }
    }
  }

  value(value: string | number | boolean | null): void {
    if ((this.sink ?? this.build()).value(value)) this.complete()
  }

  endObject(): void {
    if (this.sink !== undefined) {
      if (this.sink.end()) this.complete()
    } else if (this.place === DOCUMENT) {
      this.place = END
    } else {
      this.endFile()
    }
  }

  endArray(): void {
    if (this.sink !== undefined) {
      if (this.sink.end()) this.complete()
    } else {
      this.place = this.place === SUBMISSIONS ? FILE : DOCUMENT
    }
  }

  // A value read whole by the sink, where the structure was not the fixture's or inside an entry.
  private complete(): void {
    const skipped = this.sink === this.skipper
    const value = this.builder.result
    this.sink = undefined
    this.builder.result = undefined
    switch (this.place) {
      case TOP:
        // Not an object: named as the whole-document decode names it.
        this.refuse(documentIssues(value))
        this.place = END
        break
      case DOCUMENT_MEMBER:
        // `users` or `files` that is not an array: named as the whole-document decode names it.
        if (!skipped) this.refuse(documentIssues({ [this.member]: value }))
        this.place = DOCUMENT
        break
      case USERS:
        this.user(value)
        break
      case FILES:
        this.decoded(Fixture.decodeFileHeader(value, this.file++, 0))
        break
      case FILE_MEMBER:
        if (!skipped) setMember(this.header, this.member, value)
        this.place = FILE
        break
      case SUBMISSIONS:
        this.submission(value)
        break
    }
  }

  /** Whether `result` decoded; refuses its issues if not. */
  private decoded<A>(
    result: Either.Either<A, Array<Fixture.FixtureIssue>>
  ): result is Either.Right<Array<Fixture.FixtureIssue>, A> {
    if (Either.isLeft(result)) {
      this.refuse(result.left)
      return false
    }
    return true
  }

  private user(value: unknown): void {
    const index = this.users++
    const result = Fixture.decodeUser(value, index)
    if (this.decoded(result)) {
      if (!this.duplicates.user(result.right, index)) this.refused = true
      this.emit(Fixture.FixtureEntry.User({ user: result.right }))
    }
  }

  private submission(value: unknown): void {
    const result = Fixture.decodeSubmission(value, this.file, this.submissions++)
    if (this.decoded(result) && !this.refused) {
      this.batch.push({ file: this.file, createdDate: result.right.createdDate, contentJson: result.right.contentJson })
      if (this.batch.length >= this.batchSize) this.flush()
    }
  }

  private endFile(): void {
    const index = this.file++
    const result = Fixture.decodeFileHeader(this.header, index, this.submissions)
    if (this.decoded(result)) {
      if (!this.duplicates.file(result.right, index)) this.refused = true
      this.emit(Fixture.FixtureEntry.File({ file: result.right }))
    }
    this.place = FILES
  }
}

/**
 * Reads a fixture from its text, in chunks cut anywhere. The stream fails with `FixtureMalformed` where the
 * text stops being JSON, and at its end with `FixtureInvalid` naming every refused entry; it hands out no
 * entry after the first refused one, so a consumer that stages entries in a transaction rolls back little.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromText = <E, R>(
  text: Stream.Stream<string, E, R>,
  options: ReadOptions = {}
): Stream.Stream<Fixture.FixtureEntry, E | FixtureMalformed | Fixture.FixtureInvalid, R> =>
  Stream.suspend(() => {
    const reader = new Reader(options.batchSize ?? defaultBatchSize)
    return Stream.concat(
      Stream.mapConcatEffect(text, (chunk) => reader.write(chunk)),
      Stream.fromIterableEffect(Effect.suspend(() => reader.end()))
    )
  })

/**
 * Reads a fixture from its UTF-8 bytes, in chunks cut anywhere, even inside a character.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromBytes = <E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  options: ReadOptions = {}
): Stream.Stream<Fixture.FixtureEntry, E | FixtureMalformed | Fixture.FixtureInvalid, R> =>
  fromText(Stream.decodeText(bytes), options)
