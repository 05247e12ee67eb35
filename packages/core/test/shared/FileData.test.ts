import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { InstantFromIso, isRepresentable, Timestamp, timestampFromEpochMillis } from "../../src/shared/FileData.js"

const MIN = Date.parse("0000-01-01T00:00:00.000Z")
const MAX = Date.parse("9999-12-31T23:59:59.999Z")
const isTimestamp = Schema.is(Timestamp)

describe("Timestamp", () => {
  it.each([
    "2024-01-01T00:00:00.000Z",
    "1970-01-01T00:00:00.000Z",
    "2024-02-29T23:59:59.999Z",
    "0000-01-01T00:00:00.000Z",
    "9999-12-31T23:59:59.999Z"
  ])("accepts %s", (text) => {
    expect(isTimestamp(text)).toBe(true)
  })

  it.each([
    "2024-01-01T00:00:00Z",
    "2024-01-01T00:00:00.00Z",
    "2024-01-01T00:00:00.0000Z",
    "2024-01-01T00:00:00.000",
    "2024-01-01T00:00:00.000+00:00",
    "2024-01-01T00:00:00.000z",
    "2024-01-01 00:00:00.000Z",
    "2024-01-01",
    "+002024-01-01T00:00:00.000Z",
    "2024-13-01T00:00:00.000Z",
    "2024-02-30T00:00:00.000Z",
    "2023-02-29T00:00:00.000Z",
    "2024-01-01T24:00:00.000Z",
    " 2024-01-01T00:00:00.000Z",
    ""
  ])("refuses %j", (text) => {
    expect(isTimestamp(text)).toBe(false)
  })

  it("refuses non-strings", () => {
    expect(isTimestamp(Date.UTC(2024, 0, 1))).toBe(false)
    expect(isTimestamp(new Date(Date.UTC(2024, 0, 1)))).toBe(false)
  })
})

describe("timestampFromEpochMillis", () => {
  it.prop(
    "gives a Timestamp that reads back as the same instant",
    [FastCheck.integer({ min: MIN, max: MAX })],
    ([millis]) => {
      const timestamp = timestampFromEpochMillis(millis)
      expect(isTimestamp(timestamp)).toBe(true)
      expect(Date.parse(timestamp)).toBe(millis)
      expect(Schema.decodeUnknownSync(InstantFromIso)(timestamp)).toBe(millis)
    },
    { fastCheck: { numRuns: 200 } }
  )

  it.prop(
    "prints exactly what Date#toISOString prints, leap days and century years included",
    [
      FastCheck.oneof(
        FastCheck.integer({ min: MIN, max: MAX }),
        // Around the days where calendars go wrong: Feb 28/29, Mar 1 and Dec 31 of years near centuries.
        FastCheck.tuple(
          FastCheck.constantFrom(0, 4, 100, 1600, 1700, 1900, 1970, 2000, 2024, 2100, 2400, 9996, 9999),
          FastCheck.constantFrom([1, 28], [1, 29], [2, 1], [11, 31], [0, 1]),
          FastCheck.integer({ min: -1, max: 86_400_000 })
        ).map(([year, [month = 0, day = 1], offset]) => {
          const date = new Date(0)
          date.setUTCFullYear(year, month, day)
          return Math.min(MAX, Math.max(MIN, date.getTime() + offset))
        })
      )
    ],
    ([millis]) => {
      expect(timestampFromEpochMillis(millis)).toBe(new Date(millis).toISOString())
    },
    { fastCheck: { numRuns: 5_000 } }
  )

  it.prop(
    "InstantFromIso reads the same instant written at any whole-minute offset",
    [
      FastCheck.integer({ min: Date.UTC(1, 0, 2), max: Date.UTC(9999, 11, 30) }),
      FastCheck.integer({ min: -1439, max: 1439 })
    ],
    ([millis, offsetMinutes]) => {
      const wallClock = new Date(millis + offsetMinutes * 60_000).toISOString().slice(0, -1)
      const abs = Math.abs(offsetMinutes)
      const zone = `${offsetMinutes < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`
      expect(Schema.decodeUnknownSync(InstantFromIso)(wallClock + zone)).toBe(millis)
    },
    { fastCheck: { numRuns: 200 } }
  )

  it.prop(
    "InstantFromIso reads a text of the Timestamp's form as Date.parse does, and refuses what it rolls over",
    [
      FastCheck.tuple(
        FastCheck.integer({ min: 0, max: 9999 }),
        FastCheck.integer({ min: 0, max: 13 }),
        FastCheck.integer({ min: 0, max: 32 }),
        FastCheck.integer({ min: 0, max: 24 }),
        FastCheck.integer({ min: 0, max: 60 }),
        FastCheck.integer({ min: 0, max: 60 }),
        FastCheck.integer({ min: 0, max: 999 })
      )
    ],
    ([[year, month, day, hours, minutes, seconds, millis]]) => {
      const pad = (n: number, width: number) => String(n).padStart(width, "0")
      const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(millis, 3)}Z`
      const parsed = Date.parse(text)
      const valid = !Number.isNaN(parsed) && new Date(parsed).toISOString() === text
      const decoded = Schema.decodeUnknownEither(InstantFromIso)(text)
      expect(decoded).toEqual(valid ? Either.right(parsed) : expect.objectContaining({ _tag: "Left" }))
    },
    { fastCheck: { numRuns: 2_000 } }
  )

  it.each([
    "0000-01-01T00:00:00.000Z",
    "0000-02-29T12:00:00.000Z",
    "0000-03-01T00:00:00.000Z",
    "1600-02-29T00:00:00.000Z",
    "1969-12-31T23:59:59.999Z",
    "1970-01-01T00:00:00.000Z",
    "2000-02-29T00:00:00.000Z",
    "9999-12-31T23:59:59.999Z"
  ])("InstantFromIso reads %s as Date.parse does", (text) => {
    expect(Schema.decodeUnknownSync(InstantFromIso)(text)).toBe(Date.parse(text))
  })

  it.each([
    "1900-02-29T00:00:00.000Z",
    "2024-01-01T00:00:00.00aZ",
    "2024-0a-01T00:00:00.000Z",
    "2024-01-01T00:00:00.000z",
    "２024-01-01T00:00:00.000Z",
    "2024-01-01T00:00:0-.000Z",
    "-024-01-01T00:00:00.000Z"
  ])("InstantFromIso refuses %j", (text) => {
    expect(Either.isLeft(Schema.decodeUnknownEither(InstantFromIso)(text))).toBe(true)
  })

  it("isRepresentable bounds the years 0000 to 9999", () => {
    expect(isRepresentable(MIN)).toBe(true)
    expect(isRepresentable(MAX)).toBe(true)
    expect(isRepresentable(MIN - 1)).toBe(false)
    expect(isRepresentable(MAX + 1)).toBe(false)
    expect(isRepresentable(0.5)).toBe(false)
    expect(isRepresentable(Number.NaN)).toBe(false)
    expect(timestampFromEpochMillis(MIN)).toBe("0000-01-01T00:00:00.000Z")
    expect(timestampFromEpochMillis(MAX)).toBe("9999-12-31T23:59:59.999Z")
  })

  it.effect("InstantFromIso encodes back to a Timestamp", () =>
    Effect.gen(function* () {
      const text = yield* Schema.encode(InstantFromIso)(Date.UTC(2024, 5, 1, 12, 30))
      expect(text).toBe("2024-06-01T12:30:00.000Z")
      expect(yield* Schema.encode(InstantFromIso)(MIN)).toBe("0000-01-01T00:00:00.000Z")
      expect(Either.isLeft(Schema.decodeUnknownEither(InstantFromIso)("10000-01-01T00:00:00.000Z"))).toBe(true)
    })
  )
})
