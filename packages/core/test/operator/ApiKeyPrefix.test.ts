import { describe, expect, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as ApiKeyPrefix from "../../src/operator/ApiKeyPrefix.js"

describe("ApiKeyPrefix.fromText", () => {
  it("keeps the first 8 characters of a key of at least 32, when they are printable ASCII", () => {
    expect(ApiKeyPrefix.fromText(`fdk_${"a".repeat(43)}`)).toEqual(Option.some("fdk_aaaa"))
    expect(ApiKeyPrefix.fromText("x".repeat(32))).toEqual(Option.some("xxxxxxxx"))
    expect(ApiKeyPrefix.fromText("x".repeat(31))).toEqual(Option.none())
    expect(ApiKeyPrefix.fromText("")).toEqual(Option.none())
    expect(ApiKeyPrefix.fromText(`a b${"x".repeat(40)}`)).toEqual(Option.none())
    expect(ApiKeyPrefix.fromText(`\u001b[31m${"x".repeat(40)}`)).toEqual(Option.none())
    expect(ApiKeyPrefix.fromText(`ключ${"x".repeat(40)}`)).toEqual(Option.none())
  })
})
