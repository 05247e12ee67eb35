/**
 * The rules every operation on one file runs, so each exists once: the input a transport hands them, and the
 * checks that decide whether the caller may read the file ({@link handle}), in the order
 * docs/api.md#order-of-checks states, the one statement of it: rules 1 to 3 ({@link admit}), then 4 to 6
 * ({@link open}). Reading changes no counter. How a body is read is `RequestDecoding`; how a request looks on
 * the wire, `RequestSchema`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { ApiKey, FileId } from "./FileData.js"
import {
  AccessDenied,
  about,
  FileNotFound,
  type GetFileDataError,
  type InvalidRequest,
  type RateLimited,
  type RateLimiterUnavailable,
  type StorageUnavailable
} from "./FileDataError.js"
import * as FileRepository from "./FileRepository.js"
import * as Immediate from "./Immediate.js"
import * as RateLimiter from "./RateLimiter.js"
import * as RequestDecoding from "./RequestDecoding.js"

/**
 * What a transport hands to an operation. The body is decoded lazily so a throttled caller costs no parsing.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly clientAddress: string
  /**
   * The parsed JSON body, or the transport's reason it has none; given as a function, it is called at most once:
   * once the address was counted, or first with a limiter that counts a request in one step ({@link admit}).
   */
  readonly body: Effect.Effect<unknown, InvalidRequest> | (() => Effect.Effect<unknown, InvalidRequest>)
  /**
   * Whether the request carried an `Authorization` header field, which is never read: a body without `apiKey`
   * is then refused with where the key goes (`RequestDecoding.keyInHeader`).
   */
  readonly authorization?: boolean | undefined
}

/**
 * The ports the operations run on.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ports {
  readonly files: FileRepository.FileRepository
  readonly limiter: RateLimiter.RateLimiter
}

/**
 * The ports of the context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const ports: Effect.Effect<Ports, never, FileRepository.FileRepository | RateLimiter.RateLimiter> = Effect.all({
  files: FileRepository.FileRepository,
  limiter: RateLimiter.RateLimiter
})

/**
 * What every request names: the file, and the key that should open it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Credentials {
  readonly fileId: FileId
  readonly apiKey: ApiKey
}

/**
 * Rules 1 to 3: counts the client address, reads the body with `parse`, runs `parsed` on the request (what the
 * request's log line says of it), counts the key. A limiter with `consumeRequest` counts both in one step after
 * the body was read, with the same verdicts: an address over its quota is refused whatever its body, and a body
 * refused counts only the address. Like {@link handle}, it starts when called (`Immediate.fn`).
 *
 * @since 0.2.0
 * @category use cases
 */
export const admit: <R extends { readonly apiKey: ApiKey }>(
  limiter: RateLimiter.RateLimiter,
  input: Input,
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
  parsed: (request: R) => Effect.Effect<void>
) => Immediate.Immediate<R, InvalidRequest | RateLimited | RateLimiterUnavailable> = Immediate.fn(function* <
  R extends { readonly apiKey: ApiKey }
>(
  limiter: RateLimiter.RateLimiter,
  input: Input,
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
  parsed: (request: R) => Effect.Effect<void>
) {
  const address = input.clientAddress
  const decode = input.authorization === true ? told(parse) : parse
  const body = () => (typeof input.body === "function" ? input.body() : input.body)
  if (limiter.consumeRequest === undefined) {
    yield* limiter.consume({ scope: "clientAddress", address })
    const request = yield* decode(yield* body())
    yield* parsed(request)
    yield* limiter.consume({ scope: "apiKey", apiKey: request.apiKey })
    return request
  }
  const read = yield* Immediate.either(Immediate.flatMap(body(), decode))
  if (Either.isLeft(read)) {
    yield* limiter.consume({ scope: "clientAddress", address })
    return yield* Effect.fail(read.left)
  }
  const counted = yield* limiter.consumeRequest(address, read.right.apiKey)
  if (Either.isLeft(counted.clientAddress)) return yield* Effect.fail(counted.clientAddress.left)
  yield* parsed(read.right)
  if (counted.apiKey === undefined) return yield* Effect.dieMessage("consumeRequest counted the address only")
  if (Either.isLeft(counted.apiKey)) return yield* Effect.fail(counted.apiKey.left)
  return read.right
})

// A parser whose refusals say where the key goes, for a request that sent it in a header.
const told =
  <R>(parse: (body: unknown) => Effect.Effect<R, InvalidRequest>) =>
  (body: unknown): Effect.Effect<R, InvalidRequest> =>
    Immediate.mapError(parse(body), RequestDecoding.keyInHeader)

/**
 * Runs an operation on one file for one request: the checks above, then `answer` with the request and the
 * file as found (its read point included).
 *
 * @since 0.1.0
 * @category use cases
 */
export const handle: <R extends Credentials, A>(
  ports: Ports,
  input: Input,
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
  answer: (files: FileRepository.FileRepository, request: R, file: FileRepository.FoundFile) => A
) => Immediate.Immediate<A, GetFileDataError> =
  // Stepped at once while the ports answer at once (`Immediate`); one generator function for every call.
  Immediate.fn(function* <R extends Credentials, A>(
    { files, limiter }: Ports,
    input: Input,
    parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
    answer: (files: FileRepository.FileRepository, request: R, file: FileRepository.FoundFile) => A
  ) {
    // Once the body named a file, every refusal names it, and the key's user once found (`FileDataError.about`).
    let fileId: FileId | undefined
    const admitted = yield* Immediate.either(
      admit(limiter, input, parse, (request) => {
        fileId = request.fileId
        return Immediate.void
      })
    )
    if (Either.isLeft(admitted)) {
      return yield* Effect.fail(fileId === undefined ? admitted.left : about(admitted.left, { fileId }))
    }
    const request = admitted.right
    const access = yield* Immediate.either(files.findAccess(request.apiKey, request.fileId))
    if (Either.isLeft(access)) return yield* Effect.fail(about(access.left, { fileId: request.fileId }))
    const opened = open(access.right, request.fileId)
    if (isRefused(opened)) return yield* opened
    return answer(files, request, opened)
  })

/**
 * Why rules 4 to 6 refuse a request.
 *
 * @since 0.2.0
 * @category models
 */
export type Refused = AccessDenied | FileNotFound

/**
 * Rules 4 to 6 on what one `findAccess` told of `fileId`: the file when the key is active and its user owns the
 * file, else the refusal, naming the file and the key's user if any. A missing file is told only to a valid key,
 * and another user's file looks like a wrong key.
 *
 * @since 0.2.0
 * @category use cases
 */
export const open = ({ file, owner }: FileRepository.Access, fileId: FileId): FileRepository.FoundFile | Refused => {
  if (Option.isNone(owner)) return new AccessDenied({ fileId })
  const userId = owner.value
  if (Option.isNone(file)) return new FileNotFound({ fileId, userId })
  return file.value.ownerId === userId ? file.value : new AccessDenied({ fileId, userId })
}

/**
 * Whether {@link open} refused.
 *
 * @since 0.2.0
 * @category guards
 */
export const isRefused = (opened: FileRepository.FoundFile | Refused): opened is Refused =>
  opened instanceof AccessDenied || opened instanceof FileNotFound

/**
 * Rules 4 to 6 applied to a fresh `findAccess`, with no quota counted again: for a request that read its file
 * once already and reads it again (a wait that woke up), so a key revoked meanwhile reads no more.
 *
 * @since 0.2.0
 * @category use cases
 */
export const reopen = (
  files: FileRepository.FileRepository,
  request: Credentials
): Effect.Effect<FileRepository.FoundFile, Refused | StorageUnavailable> =>
  Effect.flatMap(files.findAccess(request.apiKey, request.fileId), (access) => {
    const opened = open(access, request.fileId)
    return isRefused(opened) ? Effect.fail(opened) : Effect.succeed(opened)
  })

/**
 * An operation's two entry points: on ports the caller holds, or on the ports of the context.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operation<A> {
  /** Answers at once when the ports do (`Immediate`). */
  readonly runWith: (ports: Ports, input: Input) => Immediate.Immediate<A, GetFileDataError>
  readonly run: (
    input: Input
  ) => Effect.Effect<A, GetFileDataError, FileRepository.FileRepository | RateLimiter.RateLimiter>
}

/**
 * The operation that reads its request with `parse` and answers with `answer` (see {@link handle}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const operation = <R extends Credentials, A>(
  parse: (body: unknown) => Effect.Effect<R, InvalidRequest>,
  answer: (files: FileRepository.FileRepository, request: R, file: FileRepository.FoundFile) => A
): Operation<A> => {
  const runWith = (held: Ports, input: Input) => handle(held, input, parse, answer)
  return { runWith, run: (input) => Effect.flatMap(ports, (held) => runWith(held, input)) }
}
