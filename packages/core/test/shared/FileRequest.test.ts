import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as GetFileData from "../../src/read/GetFileData.js"
import { type FileId, timestampFromEpochMillis, type UserId } from "../../src/shared/FileData.js"
import { AccessDenied, FileNotFound, Issue } from "../../src/shared/FileDataError.js"
import * as FileRepository from "../../src/shared/FileRepository.js"
import * as FileRequest from "../../src/shared/FileRequest.js"
import * as RequestDecoding from "../../src/shared/RequestDecoding.js"
import * as TestRateLimiter from "../utils/TestRateLimiter.js"

const found: FileRepository.FoundFile = {
  id: "file-1" as FileId,
  ownerId: "user-1" as UserId,
  name: "Contact form",
  creationDate: timestampFromEpochMillis(Date.UTC(2024, 0, 1)),
  publicAvailability: false,
  SubmissionCounter: 0,
  VisitCounter: 0,
  readPoint: FileRepository.ReadPoint("0")
}

const fileId = found.id

const access = (owner: string | undefined, file: FileRepository.FoundFile | undefined): FileRepository.Access => ({
  owner: Option.fromNullable(owner as UserId | undefined),
  file: Option.fromNullable(file)
})

describe("FileRequest.open", () => {
  it("opens the file to its owner's key only, and tells a missing file only to a valid key", () => {
    expect(FileRequest.open(access("user-1", found), fileId)).toBe(found)
    expect(FileRequest.open(FileRepository.noAccess, fileId)).toBeInstanceOf(AccessDenied)
    expect(FileRequest.open(access("user-2", found), fileId)).toBeInstanceOf(AccessDenied)
    expect(FileRequest.open(access("user-1", undefined), fileId)).toBeInstanceOf(FileNotFound)
    expect(FileRequest.open(access("user-2", found), fileId)).toMatchObject({ fileId, userId: "user-2" })
    const unknownKey = FileRequest.open(FileRepository.noAccess, fileId) as AccessDenied
    expect([unknownKey.fileId, unknownKey.userId]).toEqual([fileId, undefined])
    expect(FileRequest.isRefused(FileRequest.open(access("user-1", found), fileId))).toBe(false)
    expect(FileRequest.isRefused(FileRequest.open(access("user-2", found), fileId))).toBe(true)
  })

  it.effect("is what reopen applies to a fresh findAccess", () =>
    Effect.gen(function* () {
      const files = (answer: FileRepository.Access) =>
        ({ findAccess: () => Effect.succeed(answer) }) as unknown as FileRepository.FileRepository
      const credentials = { fileId: found.id, apiKey: undefined as never }
      expect(yield* FileRequest.reopen(files(access("user-1", found)), credentials)).toBe(found)
      expect(yield* Effect.flip(FileRequest.reopen(files(access("user-2", found)), credentials))).toBeInstanceOf(
        AccessDenied
      )
      expect(yield* Effect.flip(FileRequest.reopen(files(access("user-1", undefined)), credentials))).toBeInstanceOf(
        FileNotFound
      )
    })
  )
})

describe("FileRequest.admit", () => {
  it.effect("tells a body without apiKey where the key goes when the request sent an Authorization header", () =>
    Effect.gen(function* () {
      const issues = (authorization: boolean | undefined, inOneStep: boolean) =>
        Effect.map(
          Effect.flip(
            FileRequest.admit(
              TestRateLimiter.make({ inOneStep }, []).limiter,
              { clientAddress: "::1", body: Effect.succeed({ fileId: "f" }), authorization },
              GetFileData.parseRequest,
              () => Effect.void
            )
          ),
          (failure) => (failure._tag === "InvalidRequest" ? failure.issues : failure)
        )
      const required = [new Issue({ pointer: "/apiKey", detail: "is required" })]
      for (const inOneStep of [false, true]) {
        expect(yield* issues(true, inOneStep)).toEqual([
          new Issue({ pointer: "/apiKey", detail: RequestDecoding.keyInBodyDetail })
        ])
        expect(yield* issues(false, inOneStep)).toEqual(required)
        expect(yield* issues(undefined, inOneStep)).toEqual(required)
      }
    })
  )
})
