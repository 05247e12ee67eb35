/**
 * A typed client of the service, built from its `HttpApi` definition: one method per operation, payloads
 * as plain strings, replies decoded, refusals as the typed failures of `ApiError`.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as ApiError from "./ApiError.js"
import * as FileDataApi from "./FileDataApi.js"
import * as Models from "./Models.js"

/**
 * The client: `client.files.getFileData({ payload })`, `client.files.getSubmissions({ payload })`,
 * `client.system.health()`.
 *
 * @since 0.1.0
 * @category models
 */
export type Client =
  typeof FileDataApi.FileDataApi extends HttpApi.HttpApi<string, infer Groups, infer E, never>
    ? HttpApiClient.Client<Groups, E, never>
    : never

/**
 * Where the service is and how requests go out.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The service's origin, and path prefix if it is mounted under one, e.g. `https://files.example.com`;
   * omitted, requests go to the paths alone (for an `HttpClient` that adds the origin itself).
   */
  readonly baseUrl?: URL | string | undefined
  /** Adds retries, headers, tracing or a timeout to every request. */
  readonly transformClient?: ((client: HttpClient.HttpClient) => HttpClient.HttpClient) | undefined
}

/**
 * Builds the client on the `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  HttpApiClient.make(FileDataApi.FileDataApi, options)

/**
 * The client as a service.
 *
 * @since 0.1.0
 * @category tags
 */
export class FileDataClient extends Context.Tag("@filedata/client/FileDataClient")<FileDataClient, Client>() {}

/**
 * The client on the `HttpClient` the caller provides (Node's, a test's, one with retries).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithoutHttpClient = (options: Options): Layer.Layer<FileDataClient, never, HttpClient.HttpClient> =>
  Layer.effect(FileDataClient, make(options))

/**
 * The client on the platform's `fetch`: works in browsers, Node 20+, Deno and Bun.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<FileDataClient> =>
  layerWithoutHttpClient(options).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * What a streamed export fails with: a refusal of the service, a transport failure, or a reply that is not what
 * the contract says.
 *
 * @since 0.2.0
 * @category models
 */
export type ExportError = ApiError.FileDataFailure | HttpClientError.HttpClientError | ParseResult.ParseError

// The problem schema of a refusal, by its status and code, as the HttpApi client picks it.
const problemOf = (status: number, code: unknown) => {
  switch (status) {
    case 403:
      return FileDataApi.AccessDeniedProblem
    case 404:
      return FileDataApi.FileNotFoundProblem
    case 422:
      return code === "rate_limited" ? FileDataApi.RateLimitedProblem : FileDataApi.ValidationProblem
    case 503:
      return FileDataApi.UnavailableProblem
    default:
      return FileDataApi.InternalProblem
  }
}

/**
 * `POST /api/v1/file-data/export` as a stream of the body's bytes, read as they arrive (the typed client's
 * `exportSubmissions` reads the whole body as text): pipe it to a file or parse it as it comes. A refusal fails
 * the stream with its `ApiError`.
 *
 * @since 0.2.0
 * @category exports
 */
export const exportBytes = (
  options: Options,
  payload: Models.ExportRequest
): Stream.Stream<Uint8Array, ExportError, HttpClient.HttpClient> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const base = yield* HttpClient.HttpClient
      const client = options.transformClient === undefined ? base : options.transformClient(base)
      const request = HttpClientRequest.post(
        options.baseUrl === undefined ? FileDataApi.exportPath : new URL(FileDataApi.exportPath, options.baseUrl)
      ).pipe(HttpClientRequest.bodyUnsafeJson(payload))
      const response = yield* client.execute(request)
      if (response.status === 200) return response.stream
      const problem: unknown = yield* response.json
      const code = typeof problem === "object" && problem !== null ? (problem as { code?: unknown }).code : undefined
      const failure = yield* Schema.decodeUnknown(
        problemOf(response.status, code) as Schema.Schema<ApiError.FileDataFailure, unknown>
      )(problem)
      return yield* Effect.fail(failure)
    })
  )

/**
 * An NDJSON export decoded: one `Submission` per line, in reply order, read as the body arrives.
 *
 * @since 0.2.0
 * @category exports
 */
export const exportRows = (
  options: Options,
  payload: Omit<Models.ExportRequest, "format">
): Stream.Stream<Models.Submission, ExportError, HttpClient.HttpClient> =>
  exportBytes(options, { ...payload, format: "ndjson" }).pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.filter((line) => line.length > 0),
    Stream.mapEffect((line) => Schema.decodeUnknown(Schema.parseJson(Models.Submission))(line))
  )
