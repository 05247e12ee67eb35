import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type * as FileRepository from "../src/FileRepository.js"
import type * as FileRequest from "../src/FileRequest.js"
import * as GetFileData from "../src/GetFileData.js"
import * as GetSubmissions from "../src/GetSubmissions.js"
import type * as RateLimiter from "../src/RateLimiter.js"
import { input } from "./utils/Requests.js"
import * as TestFileRepository from "./utils/TestFileRepository.js"
import * as TestRateLimiter from "./utils/TestRateLimiter.js"

const spec: TestFileRepository.RepositorySpec = {
  users: [
    { id: "alice", apiKeys: ["alice-key"] },
    { id: "carol", apiKeys: ["carol-key"] }
  ],
  files: [{ id: "contact", ownerId: "alice", submissions: [] }]
}

const provided = <A, E>(effect: Effect.Effect<A, E, FileRepository.FileRepository | RateLimiter.RateLimiter>) =>
  Effect.provide(effect, Layer.merge(TestFileRepository.make(spec).layer, TestRateLimiter.make().layer))

type Operation = (
  input: FileRequest.Input
) => Effect.Effect<unknown, unknown, FileRepository.FileRepository | RateLimiter.RateLimiter>

const operations: ReadonlyArray<readonly [string, Operation]> = [
  ["GetFileData", GetFileData.run],
  ["GetSubmissions", GetSubmissions.run]
]

/**
 * The annotations of a line the same fiber logs after the operation, as a transport's request line; each call
 * as a request's fiber of its own would, from no annotations.
 */
const annotationsAfter = (operation: Operation, body: unknown) =>
  Effect.gen(function* () {
    const lines: Array<Record<string, unknown>> = []
    const logger = Logger.make(({ annotations }) => void lines.push(Object.fromEntries(annotations)))
    yield* Effect.exit(provided(operation(input(body, []))))
    yield* Effect.logInfo("request").pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    return lines[0]
  }).pipe(Effect.locally(FiberRef.currentLogAnnotations, HashMap.empty()))

describe("what the request's log line learns", () => {
  for (const [name, operation] of operations) {
    it.effect(`${name}: the file once the body is read, the key's user once the key is known; never the key`, () =>
      Effect.gen(function* () {
        expect(yield* annotationsAfter(operation, { fileId: "contact", apiKey: "alice-key" })).toEqual({
          fileId: "contact",
          userId: "alice"
        })
        // The user is the one whose key it is, also when the file is another's.
        expect(yield* annotationsAfter(operation, { fileId: "contact", apiKey: "carol-key" })).toEqual({
          fileId: "contact",
          userId: "carol"
        })
        expect(yield* annotationsAfter(operation, { fileId: "contact", apiKey: "no-such-key" })).toEqual({
          fileId: "contact"
        })
        expect(yield* annotationsAfter(operation, { fileId: "contact" })).toEqual({})
      })
    )
  }

  it.effect("nothing while lines at info are not written", () =>
    Effect.gen(function* () {
      const [, operation] = operations[0] as (typeof operations)[number]
      const annotations = yield* Effect.gen(function* () {
        yield* Effect.exit(provided(operation(input({ fileId: "contact", apiKey: "alice-key" }, []))))
        return yield* FiberRef.get(FiberRef.currentLogAnnotations)
      }).pipe(
        Effect.locally(FiberRef.currentLogAnnotations, HashMap.empty()),
        Effect.locally(FiberRef.currentMinimumLogLevel, LogLevel.Warning)
      )
      expect(HashMap.size(annotations)).toBe(0)
    })
  )
})
