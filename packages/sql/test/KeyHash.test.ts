import { describe, expect, it } from "@effect/vitest"
import { FileData } from "@filedata/core"
import { KeyHash } from "@filedata/sql"
import * as Redacted from "effect/Redacted"

describe("KeyHash", () => {
  it("stores a key as the SHA-256 of its UTF-8 text, in lowercase hex", () => {
    // Known values, computed independently (`printf %s TEXT | sha256sum`).
    expect(KeyHash.hashKeyText("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(KeyHash.hashKey(Redacted.make(FileData.ApiKeyText.make("key-one")))).toBe(
      "9b346041bc9a49574eb2665b2ad2a0a3f9f9cce4e42f5d1f26deb8a256b5966a"
    )
    expect(KeyHash.hashKeyText("\u00e9")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c")
  })
})
