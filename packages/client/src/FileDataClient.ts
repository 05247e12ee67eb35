/**
 * A typed client of the service, built from its `HttpApi` definition: one method per operation, payloads
 * as plain strings, replies decoded, refusals as the typed failures of `ApiError`.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FileDataApi } from "./FileDataApi.js"

/**
 * The client: `client.files.getFileData({ payload })`, `client.files.getSubmissions({ payload })`,
 * `client.system.health()`.
 *
 * @since 0.1.0
 * @category models
 */
export type Client =
  typeof FileDataApi extends HttpApi.HttpApi<string, infer Groups, infer E, never>
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
  HttpApiClient.make(FileDataApi, options)

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
