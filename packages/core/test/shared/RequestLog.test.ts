import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as GetFileData from "../../src/read/GetFileData.js"
import type { StoredFile } from "../../src/shared/FileData.js"
import type { GetFileDataError } from "../../src/shared/FileDataError.js"
import type * as FileRepository from "../../src/shared/FileRepository.js"
import type * as FileRequest from "../../src/shared/FileRequest.js"
import type * as RateLimiter from "../../src/shared/RateLimiter.js"
import * as RequestLog from "../../src/shared/RequestLog.js"
import * as GetSubmissions from "../../src/sync/GetSubmissions.js"
import type * as SubmissionSignals from "../../src/sync/SubmissionSignals.js"
import { input } from "../utils/Requests.js"
import * as TestFileRepository from "../utils/TestFileRepository.js"
import * as TestRateLimiter from "../utils/TestRateLimiter.js"

const spec: TestFileRepository.RepositorySpec = {
  users: [
    { id: "alice", apiKeys: ["alice-key"] },
    { id: "carol", apiKeys: ["carol-key"] }
  ],
  files: [{ id: "contact", ownerId: "alice", submissions: [] }]
}

type Ports = FileRepository.FileRepository | RateLimiter.RateLimiter | SubmissionSignals.SubmissionSignals

const provided = <A, E>(effect: Effect.Effect<A, E, Ports>) => {
  const repository = TestFileRepository.make(spec)
  return Effect.provide(effect, Layer.mergeAll(repository.layer, TestRateLimiter.make().layer, repository.signals))
}

type Operation = (input: FileRequest.Input) => Effect.Effect<{ readonly file: StoredFile }, GetFileDataError, Ports>

const operations: ReadonlyArray<readonly [string, Operation]> = [
  ["GetFileData", GetFileData.run],
  ["GetSubmissions", GetSubmissions.run]
]

/**
 * What the operation's outcome says of the request, as a transport reads it for the request's line: the file
 * answered and its owner, or the subject of the refusal (`FileDataError.Subject`). Never more.
 */
const subjectAfter = (operation: Operation, body: unknown) =>
  Effect.map(Effect.either(provided(operation(input(body, [])))), (outcome) => {
    if (Either.isRight(outcome)) return { fileId: outcome.right.file.id, userId: outcome.right.file.ownerId }
    const { fileId, userId } = outcome.left as { fileId?: string; userId?: string }
    return { ...(fileId === undefined ? {} : { fileId }), ...(userId === undefined ? {} : { userId }) }
  })

describe("what the request's outcome says of it, for its log line", () => {
  for (const [name, operation] of operations) {
    it.effect(`${name}: the file once the body is read, the key's user once the key is known; never the key`, () =>
      Effect.gen(function* () {
        expect(yield* subjectAfter(operation, { fileId: "contact", apiKey: "alice-key" })).toEqual({
          fileId: "contact",
          userId: "alice"
        })
        // The user is the one whose key it is, also when the file is another's.
        expect(yield* subjectAfter(operation, { fileId: "contact", apiKey: "carol-key" })).toEqual({
          fileId: "contact",
          userId: "carol"
        })
        expect(yield* subjectAfter(operation, { fileId: "missing", apiKey: "carol-key" })).toEqual({
          fileId: "missing",
          userId: "carol"
        })
        expect(yield* subjectAfter(operation, { fileId: "contact", apiKey: "no-such-key" })).toEqual({
          fileId: "contact"
        })
        expect(yield* subjectAfter(operation, { fileId: "contact" })).toEqual({})
      })
    )
  }

  it.effect("the operations write nothing into the fiber's record", () =>
    Effect.gen(function* () {
      for (const [, operation] of operations) {
        const recorded = Effect.zipRight(
          RequestLog.begin,
          Effect.zipRight(
            Effect.exit(provided(operation(input({ fileId: "contact", apiKey: "alice-key" }, [])))),
            FiberRef.get(RequestLog.currentFields)
          )
        )
        expect(yield* recorded).toEqual({})
      }
    })
  )

  it.effect("annotate adds to the record a transport began, and to none when it began none", () =>
    Effect.gen(function* () {
      expect(yield* Effect.zipRight(RequestLog.annotate("code", "x"), FiberRef.get(RequestLog.currentFields))).toBe(
        undefined
      )
      const begun = Effect.zipRight(
        RequestLog.begin,
        Effect.zipRight(RequestLog.annotate("code", "x"), FiberRef.get(RequestLog.currentFields))
      )
      expect(yield* begun).toEqual({ code: "x" })
    })
  )
})
