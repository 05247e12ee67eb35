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
import {
  type ChangesReply,
  ExportSubmissions,
  type FileDataError,
  type GetChanges,
  RequestSchema,
  SubmissionsReply
} from "@filedata/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ApiError from "./ApiError.js"
import * as FileDataApi from "./FileDataApi.js"
import * as ProblemDocument from "./ProblemDocument.js"

/**
 * The client: `client.files.getFileData({ payload })`, `client.files.getSubmissions({ payload })`,
 * `client.files.getChanges({ payload })` (the change feed), `client.system.health()`. Besides the refusals of each operation, a call fails with `ApiError.Unreachable`
 * when no connection to the service could be made.
 *
 * @since 0.1.0
 * @category models
 */
export type Client =
  typeof FileDataApi.FileDataApi extends HttpApi.HttpApi<string, infer Groups, infer E, never>
    ? HttpApiClient.Client<Groups, E | ApiError.Unreachable, never>
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

// The system codes of a connection that could not be made: nothing reached the service.
const unreachableCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"])

// The code of a transport failure, where `fetch` (its `cause`) or Node's client (the error itself) puts it.
const systemCode = (cause: unknown): string | undefined => {
  for (let error = cause, depth = 0; typeof error === "object" && error !== null && depth < 3; depth++) {
    const code = (error as { code?: unknown }).code
    if (typeof code === "string" && unreachableCodes.has(code)) return code
    error = (error as { cause?: unknown }).cause
  }
  return undefined
}

const unreachable = (
  client: HttpClient.HttpClient
): HttpClient.HttpClient.With<HttpClientError.HttpClientError | ApiError.Unreachable> =>
  HttpClient.catchAll(client, (error): Effect.Effect<never, HttpClientError.HttpClientError | ApiError.Unreachable> => {
    const code = error._tag === "RequestError" && error.reason === "Transport" ? systemCode(error.cause) : undefined
    return code === undefined
      ? Effect.fail(error)
      : Effect.fail(new ApiError.Unreachable({ url: error.request.url, reason: code }))
  })

// A refusal of the core as the client's typed failure: the problem document the server would send, decoded as
// the client decodes the server's.
const validationFailed = (refusal: FileDataError.InvalidRequest): ApiError.ValidationFailed =>
  Schema.decodeUnknownSync(FileDataApi.ValidationProblem)(JSON.parse(ProblemDocument.fromFailure(refusal).body))

// The refusal of `payload` by the reading `schema` carries (`RequestSchema.getParse`), if the server would refuse
// it; read as the server reads it, after JSON.
const refusal = (schema: Schema.Schema.Any, payload: unknown): Effect.Effect<void, ApiError.ValidationFailed> =>
  Option.match(RequestSchema.getParse(schema), {
    onNone: () => Effect.void,
    onSome: (parse) =>
      Effect.asVoid(Effect.mapError(parse(JSON.parse(JSON.stringify(payload ?? null))), validationFailed))
  })

// Each operation whose payload carries the core's own reading (`RequestSchema.getParse`) refuses a body the server
// would refuse before sending it, with the same `ValidationFailed` and issues, rather than a `ParseError`.
const refuseLocally = (client: Record<string, unknown>): void => {
  for (const group of Object.values(FileDataApi.FileDataApi.groups)) {
    const methods = (group.topLevel ? client : client[group.identifier]) as Record<
      string,
      (request: { readonly payload?: unknown } | undefined) => Effect.Effect<unknown, unknown>
    >
    for (const endpoint of Object.values(group.endpoints)) {
      const payload = Option.getOrUndefined(endpoint.payloadSchema) as Schema.Schema.Any | undefined
      const send = methods[endpoint.name]
      if (payload === undefined || Option.isNone(RequestSchema.getParse(payload)) || send === undefined) continue
      methods[endpoint.name] = (request) => Effect.zipRight(refusal(payload, request?.payload), send(request))
    }
  }
}

/**
 * Builds the client on the `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  Effect.flatMap(HttpClient.HttpClient, (base) =>
    HttpApiClient.makeWith(FileDataApi.FileDataApi, {
      httpClient: unreachable(options.transformClient === undefined ? base : options.transformClient(base)),
      baseUrl: options.baseUrl
    })
  ).pipe(
    Effect.map((client) => {
      refuseLocally(client as unknown as Record<string, unknown>)
      return client
    })
  )

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
export type ExportError =
  | ApiError.FileDataFailure
  | ApiError.Unreachable
  | HttpClientError.HttpClientError
  | ParseResult.ParseError

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
  payload: ExportSubmissions.RequestJson
): Stream.Stream<Uint8Array, ExportError, HttpClient.HttpClient> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const base = yield* HttpClient.HttpClient
      const client = unreachable(options.transformClient === undefined ? base : options.transformClient(base))
      yield* refusal(ExportSubmissions.RequestJson, payload)
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
 * An NDJSON export decoded: one submission with its id per line, in reply order, read as the body arrives.
 *
 * @since 0.2.0
 * @category exports
 */
export const exportRows = (
  options: Options,
  payload: Omit<ExportSubmissions.RequestJson, "format">
): Stream.Stream<SubmissionsReply.IdentifiedSubmission, ExportError, HttpClient.HttpClient> =>
  exportBytes(options, { ...payload, format: "ndjson" }).pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.filter((line) => line.length > 0),
    Stream.mapEffect((line) => Schema.decodeUnknown(Schema.parseJson(SubmissionsReply.IdentifiedSubmission))(line))
  )

/**
 * What following the change feed fails with: what `client.files.getChanges` fails with, a refusal of the service,
 * a transport failure, or a reply that is not what the contract says.
 *
 * @since 0.3.0
 * @category models
 */
export type ChangesError = Effect.Effect.Error<ReturnType<Client["files"]["getChanges"]>>

/**
 * `POST /api/v1/file-data/changes` followed from `payload.after` (or the file's first change): each reply of the
 * feed as it comes, the next asked for with the last one's `next` while it says `hasMore`. Store a page's `next`
 * once its changes are applied, and start there next time; a refusal (the body's too, before any request, as
 * `ValidationFailed`) fails the stream with its `ApiError`.
 *
 * @since 0.3.0
 * @category change feed
 */
export const changes = (
  options: Options,
  payload: GetChanges.RequestJson
): Stream.Stream<ChangesReply.ChangesPage, ChangesError, HttpClient.HttpClient> =>
  Stream.unwrap(
    Effect.map(make(options), (client) =>
      Stream.paginateEffect(payload.after, (after) =>
        Effect.map(
          client.files.getChanges({ payload: after === undefined ? payload : { ...payload, after } }),
          (page) => [page, page.hasMore ? Option.some(page.next) : Option.none()] as const
        )
      )
    )
  )
