// The problem documents of docs/problems.md, decoded as the client decodes replies: by status, then `code`.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ApiError, FileDataApi } from "../src/index.js"

const document = (code: ApiError.ProblemCode, detail: string, extensions: Record<string, unknown> = {}) => ({
  type: `urn:filedata:problem:${code}`,
  title: "Some title",
  status: ApiError.problemCodes[code].status,
  detail,
  code,
  ...extensions
})

// What the client decodes a 422 with: either 422 problem.
const unprocessable = Schema.Union(FileDataApi.ValidationProblem, FileDataApi.RateLimitedProblem)

describe("ApiError", () => {
  it.effect("each problem document decodes to its typed failure and encodes back to the same document", () =>
    Effect.gen(function* () {
      const cases = [
        [FileDataApi.AccessDeniedProblem, document("access_denied", "No"), ApiError.AccessDenied],
        [FileDataApi.FileNotFoundProblem, document("file_not_found", "No file has this id"), ApiError.FileNotFound],
        [FileDataApi.UnavailableProblem, document("storage_unavailable", "Down"), ApiError.ServiceUnavailable],
        [FileDataApi.UnavailableProblem, document("rate_limiter_unavailable", "Down"), ApiError.ServiceUnavailable],
        [FileDataApi.InternalProblem, document("internal_error", "Oops"), ApiError.InternalError]
      ] as const
      for (const [schema, wire, failure] of cases) {
        const decoded = yield* Schema.decodeUnknown(schema as Schema.Schema<unknown, unknown>)(wire)
        expect(decoded).toBeInstanceOf(failure)
        expect(decoded).toMatchObject({ ...wire, message: wire.detail })
        expect(yield* Schema.encode(schema as Schema.Schema<unknown, unknown>)(decoded)).toEqual(wire)
      }
    })
  )

  it.effect("a 422 is ValidationFailed with its issues or RateLimited with its seconds, by code", () =>
    Effect.gen(function* () {
      const errors = [{ pointer: "/apiKey", detail: "is required" }]
      for (const code of ["validation_failed", "unsupported_media_type", "payload_too_large"] as const) {
        const invalid = yield* Schema.decodeUnknown(unprocessable)(document(code, "/apiKey: is required", { errors }))
        expect(invalid).toBeInstanceOf(ApiError.ValidationFailed)
        expect(invalid).toMatchObject({ _tag: "ValidationFailed", code, errors })
      }
      const limited = yield* Schema.decodeUnknown(unprocessable)(
        document("rate_limited", "Too many requests for this API key; retry after 51 s", { retryAfter: 51 })
      )
      expect(limited).toBeInstanceOf(ApiError.RateLimited)
      expect(limited).toMatchObject({ _tag: "RateLimited", retryAfter: 51 })
    })
  )

  it.effect(
    "a ValidationFailed lists at most issueLimit problems and carries omitted, absent when none was left out",
    () =>
      Effect.gen(function* () {
        const errors = Array.from({ length: ApiError.issueLimit }, (_, i) => ({
          pointer: `/m${i}`,
          detail: "is not allowed"
        }))
        const capped = document("validation_failed", "/m0: is not allowed; …; and 7980 more", { errors, omitted: 7980 })
        const invalid = yield* Schema.decodeUnknown(FileDataApi.ValidationProblem)(capped)
        expect(invalid).toBeInstanceOf(ApiError.ValidationFailed)
        expect(invalid).toMatchObject({ errors, omitted: 7980 })
        expect(yield* Schema.encode(FileDataApi.ValidationProblem)(invalid)).toEqual(capped)
        const whole = yield* Schema.decodeUnknown(FileDataApi.ValidationProblem)(
          document("validation_failed", "/apiKey: is required", { errors: errors.slice(0, 1) })
        )
        expect("omitted" in whole).toBe(false)
        for (const wrong of [
          { errors: [...errors, { pointer: "/more", detail: "is not allowed" }] },
          { errors, omitted: 0 },
          { errors, omitted: 1.5 }
        ]) {
          const refused = yield* Effect.flip(
            Schema.decodeUnknown(FileDataApi.ValidationProblem)(document("validation_failed", "x", wrong))
          )
          expect(refused._tag).toBe("ParseError")
        }
      })
  )

  it.effect("a document that is not the declared one fails to decode instead of passing as another", () =>
    Effect.gen(function* () {
      const wrongCode = yield* Effect.flip(
        Schema.decodeUnknown(FileDataApi.FileNotFoundProblem)({ ...document("file_not_found", "x"), code: "not_found" })
      )
      expect(wrongCode._tag).toBe("ParseError")
      const noSeconds = yield* Effect.flip(Schema.decodeUnknown(unprocessable)(document("rate_limited", "x")))
      expect(noSeconds._tag).toBe("ParseError")
    })
  )

  it("every code's status is one the service answers with", () => {
    for (const { status } of Object.values(ApiError.problemCodes)) {
      expect([400, 403, 404, 405, 408, 414, 415, 417, 422, 431, 500, 503]).toContain(status)
    }
  })
})
