/**
 * The domain of the specification: a form file, its counters and its submissions.
 *
 * @since 0.1.0
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as DemoExamples from "./internal/demoExamples.js"
import * as TextRules from "./TextRules.js"

/**
 * Identifier of a file. The specification fixes no format, so any id of the text rules is one: non-empty,
 * at most `TextRules.maxIdLength` characters, well-formed Unicode without U+0000.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FileId = TextRules.Id.pipe(Schema.brand("FileId"))

/**
 * @since 0.1.0
 * @category models
 */
export type FileId = typeof FileId.Type

/**
 * Identifier of the user who owns files and API keys, under the same rules as a {@link FileId}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserId = TextRules.Id.pipe(Schema.brand("UserId"))

/**
 * @since 0.1.0
 * @category models
 */
export type UserId = typeof UserId.Type

/**
 * The plain text of an API key: any non-empty text. It only ever travels inside `Redacted` (see {@link ApiKey}).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiKeyText = TextRules.NonEmptyText.pipe(Schema.brand("ApiKeyText"))

/**
 * A caller's API key, decoded straight into `Redacted` so it cannot reach a log or an error by accident.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiKey = Schema.Redacted(ApiKeyText)

/**
 * @since 0.1.0
 * @category models
 */
export type ApiKey = typeof ApiKey.Type

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

// `Date.parse` rolls impossible fields over (2024-02-30 reads as March 1): only the canonical text is one.
const isTimestamp = (s: string): boolean => {
  if (!TIMESTAMP.test(s)) return false
  const millis = Date.parse(s)
  return !Number.isNaN(millis) && timestampFromEpochMillis(millis) === s
}

/**
 * An instant as the reply shows it: ISO 8601 in UTC with milliseconds, `YYYY-MM-DDTHH:mm:ss.sssZ`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Timestamp = Schema.String.pipe(
  Schema.filter(isTimestamp, {
    message: () => "must be a UTC timestamp of the form YYYY-MM-DDTHH:mm:ss.sssZ",
    jsonSchema: { format: "date-time" }
  }),
  Schema.brand("Timestamp")
).annotations({ title: "Timestamp", description: "UTC with milliseconds, YYYY-MM-DDTHH:mm:ss.sssZ" })

/**
 * @since 0.1.0
 * @category models
 */
export type Timestamp = typeof Timestamp.Type

// Beyond these, `toISOString` switches to six-digit years and the reply format would break.
const MIN_EPOCH_MILLIS = Date.parse("0000-01-01T00:00:00.000Z")
const MAX_EPOCH_MILLIS = Date.parse("9999-12-31T23:59:59.999Z")
const ISO_WITH_ZONE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|([+-])(\d{2}):(\d{2}))$/

/**
 * Whether an instant can be shown as a {@link Timestamp} (years 0000 to 9999).
 *
 * @since 0.1.0
 * @category constructors
 */
export const isRepresentable = (epochMillis: number): boolean =>
  Number.isInteger(epochMillis) && epochMillis >= MIN_EPOCH_MILLIS && epochMillis <= MAX_EPOCH_MILLIS

/**
 * Formats epoch milliseconds as a {@link Timestamp}; storage keeps instants as epoch milliseconds.
 *
 * @since 0.1.0
 * @category constructors
 */
export const timestampFromEpochMillis = (epochMillis: number): Timestamp =>
  (isRepresentable(epochMillis) ? formatIso(epochMillis) : new Date(epochMillis).toISOString()) as Timestamp

const MILLIS_PER_DAY = 86_400_000
const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`)
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`)
const four = (n: number): string => (n < 1000 ? `${n}`.padStart(4, "0") : `${n}`)

// What `Date#toISOString` prints for years 0000 to 9999, at a quarter of its cost: a reply formats one
// timestamp per submission, and `toISOString` was the largest single item of a small reply's profile.
// The date is Howard Hinnant's `civil_from_days` (proleptic Gregorian calendar, as `Date` uses).
const formatIso = (epochMillis: number): string => {
  const days = Math.floor(epochMillis / MILLIS_PER_DAY)
  const millisOfDay = epochMillis - days * MILLIS_PER_DAY
  const shifted = days + 719_468
  const era = Math.floor(shifted / 146_097)
  const dayOfEra = shifted - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  const hours = Math.floor(millisOfDay / 3_600_000)
  const minutes = Math.floor(millisOfDay / 60_000) % 60
  const seconds = Math.floor(millisOfDay / 1000) % 60
  const millis = millisOfDay % 1000
  const iso = `${four(year)}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(seconds)}.${three(millis)}Z`
  // Read once, so V8 makes it one flat string (about 40 bytes) rather than keeping its 14 pieces (about 450): a
  // file's creation date lives as long as a request that waits for it.
  iso.charCodeAt(0)
  return iso
}

// The digit at `i`, or a negative number large enough to make any field it is part of out of range.
const digitAt = (s: string, i: number): number => {
  const digit = s.charCodeAt(i) - 48
  return digit >= 0 && digit <= 9 ? digit : -100_000
}

const isLeapYear = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

// A Timestamp's own form, `YYYY-MM-DDTHH:mm:ss.sssZ`, as nearly every fixture writes its dates, read by
// arithmetic rather than the general path (docs/performance.md#streaming-fixture-import). The date is
// Howard Hinnant's `days_from_civil`, the inverse of `formatIso`'s. NaN when a field is out of range; any other
// form is left to the general path.
const parseTimestamp = (s: string): number => {
  const year = digitAt(s, 0) * 1000 + digitAt(s, 1) * 100 + digitAt(s, 2) * 10 + digitAt(s, 3)
  const month = digitAt(s, 5) * 10 + digitAt(s, 6)
  const day = digitAt(s, 8) * 10 + digitAt(s, 9)
  const hours = digitAt(s, 11) * 10 + digitAt(s, 12)
  const minutes = digitAt(s, 14) * 10 + digitAt(s, 15)
  const seconds = digitAt(s, 17) * 10 + digitAt(s, 18)
  const millis = digitAt(s, 20) * 100 + digitAt(s, 21) * 10 + digitAt(s, 22)
  if (year < 0 || month < 1 || month > 12 || day < 1 || hours < 0 || hours > 23 || minutes < 0) return Number.NaN
  if (minutes > 59 || seconds < 0 || seconds > 59 || millis < 0) return Number.NaN
  if (day > (month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0))) return Number.NaN
  const shiftedYear = month <= 2 ? year - 1 : year
  const era = Math.floor(shiftedYear / 400)
  const yearOfEra = shiftedYear - era * 400
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  const days = era * 146_097 + dayOfEra - 719_468
  return days * MILLIS_PER_DAY + ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis
}

const hasTimestampShape = (s: string): boolean =>
  s.length === 24 &&
  s.charCodeAt(4) === 45 &&
  s.charCodeAt(7) === 45 &&
  s.charCodeAt(10) === 84 &&
  s.charCodeAt(13) === 58 &&
  s.charCodeAt(16) === 58 &&
  s.charCodeAt(19) === 46 &&
  s.charCodeAt(23) === 90

// `Date.parse` rolls impossible fields over (2024-02-30 reads as March 1, 24:00 as the next day): the instant,
// shifted back to the given offset, must show the date and time as written.
const parseInstant = (s: string): number => {
  if (hasTimestampShape(s)) return parseTimestamp(s)
  const match = ISO_WITH_ZONE.exec(s)
  if (match === null) return Number.NaN
  const millis = Date.parse(s)
  if (!isRepresentable(millis)) return Number.NaN
  const [, dateTime = "", seconds, sign, hours = "0", minutes = "0"] = match
  const offsetMillis = (sign === "-" ? -1 : 1) * (Number(hours) * 60 + Number(minutes)) * 60_000
  const written = seconds === undefined ? dateTime : `${dateTime}:${seconds}`
  return timestampFromEpochMillis(millis + offsetMillis).startsWith(written) ? millis : Number.NaN
}

/**
 * An instant given in any ISO 8601 date-time with a zone (`Z` or an offset), read as epoch milliseconds
 * in UTC. Input without a zone is ambiguous and refused.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InstantFromIso = Schema.transformOrFail(Schema.String, Schema.Number, {
  strict: true,
  decode: (s, _, ast) => {
    const millis = parseInstant(s)
    return isRepresentable(millis)
      ? ParseResult.succeed(millis)
      : ParseResult.fail(
          new ParseResult.Type(ast, s, "must be an ISO 8601 date-time with a zone, e.g. 2024-01-01T00:00:00.000Z")
        )
  },
  encode: (millis) => ParseResult.succeed(timestampFromEpochMillis(millis))
}).annotations({ identifier: "Instant" })

/**
 * A counter of the reply: a whole number, 0 or more.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Count = Schema.Number.pipe(Schema.int(), Schema.nonNegative()).annotations({
  title: "Count",
  description: "A whole number, 0 or more"
})

const isContent = (u: unknown): u is { readonly [field: string]: string } => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  for (const value of Object.values(u)) if (typeof value !== "string") return false
  return true
}

/**
 * What a submission holds: form-field name to the submitted value. Keys vary from file to file. Checked, not
 * copied, so every name a reply had stays, `__proto__` included (a record copied by assignment drops it).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SubmissionContent = Schema.declare(isContent, {
  description: "Form-field name to the submitted value; the names vary from file to file",
  jsonSchema: { type: "object", additionalProperties: { type: "string" } }
})

/**
 * @since 0.1.0
 * @category models
 */
export type SubmissionContent = typeof SubmissionContent.Type

/**
 * One form submission as the reply shows it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Submission = Schema.Struct({
  createdDate: Timestamp,
  content: SubmissionContent
}).annotations({ identifier: "Submission" })

/**
 * @since 0.1.0
 * @category models
 */
export type Submission = typeof Submission.Type

/**
 * The reply of the operation: the file's metadata, its counters and all its submissions, in ascending
 * `createdDate` with ties in insertion order. The field names are the specification's, capitals included.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FileData = Schema.Struct({
  name: Schema.String,
  creationDate: Timestamp,
  publicAvailability: Schema.Boolean,
  SubmissionCounter: Count,
  VisitCounter: Count,
  submissions: Schema.Array(Submission)
}).annotations({
  identifier: "FileData",
  // The reply for `pnpm filedata demo`'s demo-contact-form, the file the request's example names.
  examples: [
    {
      name: "Contact form",
      creationDate: "2024-03-04T08:15:00.000Z" as Timestamp,
      publicAvailability: true,
      SubmissionCounter: 4,
      VisitCounter: 412,
      submissions: DemoExamples.contactFormSubmissions
    }
  ]
})

/**
 * @since 0.1.0
 * @category models
 */
export type FileData = typeof FileData.Type

/**
 * A file as storage holds it: the reply's metadata plus the owner, which decides who may read it.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredFile {
  readonly id: FileId
  readonly ownerId: UserId
  readonly name: string
  readonly creationDate: Timestamp
  readonly publicAvailability: boolean
  readonly SubmissionCounter: number
  readonly VisitCounter: number
}

/**
 * A submission as storage holds it. The content stays the JSON text it was imported as, so keys, their
 * order and odd names such as `__proto__` survive, and a reply splices it in without decoding it again.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredSubmission {
  readonly createdDate: Timestamp
  readonly contentJson: string
}
