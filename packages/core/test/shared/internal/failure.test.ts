// A failure made with `withMessage` is the `Schema.TaggedError` it replaces but for its message: the same
// fields, tag, encoding and equality, the message still a getter rather than a field.
import { describe, expect, it } from "@effect/vitest"
import * as Equal from "effect/Equal"
import * as Schema from "effect/Schema"
import { UserNotFound } from "../../../src/operator/OperatorStore.js"
import { RateLimited, StorageUnavailable } from "../../../src/shared/FileDataError.js"

describe("withMessage", () => {
  it("gives the fixed message, or the one made from the fields", () => {
    expect(new StorageUnavailable({ cause: new Error("down") }).message).toBe("Storage is not available")
    expect(new UserNotFound({ userId: "ana" }).message).toBe('No user has the id "ana"')
    expect(new RateLimited({ scope: "clientAddress", limit: 1, retryAfterMillis: 5 }).message).toBe(
      "Too many requests for this client address"
    )
  })

  it("keeps the message out of the fields, so encoding and equality are the tagged error's", () => {
    const failure = new UserNotFound({ userId: "ana" })
    expect(Object.keys(failure)).not.toContain("message")
    expect(Schema.encodeSync(UserNotFound)(failure)).toEqual({ _tag: "UserNotFound", userId: "ana" })
    const decoded = Schema.decodeUnknownSync(UserNotFound)({ _tag: "UserNotFound", userId: "ana" })
    expect(decoded).toBeInstanceOf(UserNotFound)
    expect(decoded.message).toBe(failure.message)
    expect(Equal.equals(decoded, failure)).toBe(true)
  })
})
