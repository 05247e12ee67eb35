import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as GetFileData from "../../src/read/GetFileData.js"
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

type Operation = (input: FileRequest.Input) => Effect.Effect<unknown, unknown, Ports>

const operations: ReadonlyArray<readonly [string, Operation]> = [
  ["GetFileData", GetFileData.run],
  ["GetSubmissions", GetSubmissions.run]
]

/**
 * The fields of the request's line, as a transport writes it after the operation in the same fiber, having handed
 * the operation the fiber's record (`RequestLog.use`). The annotations of the line besides, which the operation
 * leaves alone.
 */
const lineAfter = (operation: Operation, body: unknown) =>
  Effect.gen(function* () {
    const lines: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
    const logger = Logger.make(({ message, annotations }) =>
      lines.push({ message, annotations: Object.fromEntries(annotations) })
    )
    const fields: RequestLog.Fields = {}
    yield* RequestLog.use(fields)
    yield* Effect.exit(provided(operation({ ...input(body, []), fields })))
    yield* RequestLog.write("request", { status: 200 }).pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    return lines[0]
  }).pipe(Effect.locally(FiberRef.currentLogAnnotations, HashMap.empty()))

const annotationsAfter = (operation: Operation, body: unknown) =>
  Effect.map(lineAfter(operation, body), (line) => {
    if (line === undefined) throw new Error("no line was logged")
    expect(line.annotations).toEqual({})
    const [message, fields] = line.message as [string, Record<string, unknown>]
    expect(message).toBe("request")
    expect(fields.status).toBe(200)
    const { status: _, ...learned } = fields
    return learned
  })

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

  it.effect("the fiber's record for a request handed none, and each request's own record for its line", () =>
    Effect.gen(function* () {
      const [, operation] = operations[0] as (typeof operations)[number]
      const run = (fields?: RequestLog.Fields) =>
        provided(operation({ ...input({ fileId: "contact", apiKey: "alice-key" }, []), fields }))
      expect(yield* Effect.zipRight(Effect.exit(run()), FiberRef.get(RequestLog.currentFields))).toBeUndefined()
      // No record in the input: the fiber's, once a transport began one.
      const begun = Effect.zipRight(RequestLog.begin, Effect.zipRight(run(), FiberRef.get(RequestLog.currentFields)))
      expect(yield* begun).toEqual({ fileId: "contact", userId: "alice" })
      // Two requests' fibers at once: each line has its own request's fields.
      const bob = Effect.gen(function* () {
        const fields: RequestLog.Fields = {}
        yield* Effect.exit(provided(operation({ ...input({ fileId: "other", apiKey: "carol-key" }, []), fields })))
        return fields
      })
      const alice = Effect.gen(function* () {
        const fields: RequestLog.Fields = {}
        yield* Effect.exit(run(fields))
        return fields
      })
      const [first, second] = yield* Effect.all([alice, bob], { concurrency: 2 })
      expect(first).toEqual({ fileId: "contact", userId: "alice" })
      expect(second).toEqual({ fileId: "other", userId: "carol" })
    })
  )
})
