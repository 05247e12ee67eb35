import { ProblemCode } from "@filedata/core"
import * as ProblemStatus from "../ProblemStatus.js"

interface Response {
  description: string
  content?: Record<string, unknown>
  headers?: Record<string, unknown>
}

interface Operation {
  responses: Record<string, Response>
  parameters?: ReadonlyArray<unknown>
  security?: ReadonlyArray<unknown>
}

const header = (description: string, schema: Record<string, unknown> = { type: "string" }) => ({
  description,
  schema
})

const requestIdHeader = {
  "X-Request-Id": header(
    "The request's id: the client's X-Request-Id when it matches [A-Za-z0-9._:-]{1,128}, else a new UUID; the server logs it"
  )
}

const retryAfterHeader = (when: string) => ({
  "Retry-After": header(`Seconds to wait before retrying; ${when}`, { type: "integer", minimum: 1 })
})

const rateLimitHeaders = {
  "RateLimit-Policy": header(
    'The quotas enforced (draft-ietf-httpapi-ratelimit-headers), e.g. `"api-key";q=60;w=60, "client-address";q=600;w=60`'
  ),
  RateLimit: header(
    'Requests remaining (r) and seconds until the window ends (t) in each quota this request counted against, e.g. `"client-address";r=599;t=60, "api-key";r=59;t=60`'
  )
}

const addHeaders = (response: Response, headers: Record<string, unknown>): void => {
  response.headers = { ...response.headers, ...headers }
}

/**
 * What every operation that reads a file documents beyond its schemas: the rate-limit header fields on
 * every reply, `Retry-After` on the rate-limited 422, and `application/problem+json` for the 422, which
 * HttpApi reports as `application/json` because two problems share that status.
 *
 * @internal
 */
export const fileDataOperation = (operation: Record<string, unknown>): Record<string, unknown> => {
  const { responses } = operation as unknown as Operation
  for (const [status, response] of Object.entries(responses)) {
    addHeaders(response, rateLimitHeaders)
    if (status === "422") {
      addHeaders(response, retryAfterHeader("sent with `rate_limited` only, the same value as `retryAfter`"))
    }
    // HttpApi reports a status that two problems share (422; a webhook operation's 404) as application/json.
    const json = response.content?.["application/json"]
    if (Number(status) >= 400 && json !== undefined) response.content = { "application/problem+json": json }
  }
  return operation
}

/**
 * The export's extras on top of {@link fileDataOperation}: its NDJSON body beside the CSV one, and the
 * `Content-Disposition` of its 200.
 *
 * @internal
 */
export const exportOperation = (operation: Record<string, unknown>): Record<string, unknown> => {
  fileDataOperation(operation)
  const ok = (operation as unknown as Operation).responses["200"]
  if (ok !== undefined) {
    ok.content = {
      ...ok.content,
      "application/x-ndjson": {
        schema: { type: "string", description: "One submission per line, as in the File reply" }
      }
    }
    addHeaders(ok, {
      "Content-Disposition": header('attachment; filename="FILE_ID.csv" (or .ndjson), and filename* in UTF-8')
    })
  }
  return operation
}

// A problem the server answers before any route (no typed failure of the client stands for it), declared on an
// operation with a schema of its own, inline.
const declareProtocolProblem = (
  operation: Operation,
  code: ProblemCode.ProblemCode,
  description: string,
  headers: Record<string, unknown> = {}
): void => {
  const { title, when } = ProblemCode.table[code]
  const status = ProblemStatus.status(code)
  const constant = (value: string | number, description: string) => ({
    type: typeof value === "number" ? "integer" : "string",
    enum: [value],
    description
  })
  operation.responses[String(status)] = {
    description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: {
      "application/problem+json": {
        schema: {
          type: "object",
          required: ["type", "title", "status", "detail", "code"],
          properties: {
            type: constant(ProblemCode.type(code), "`urn:filedata:problem:<code>`"),
            title: constant(title, "A fixed text for the code"),
            status: constant(status, "The HTTP status"),
            detail: { type: "string", description: "Human-readable; a fixed text" },
            code: constant(code, "Stable and machine-readable: branch on this")
          },
          additionalProperties: false,
          description: `RFC 9457 problem details: ${when}`
        }
      }
    }
  }
}

/**
 * The one 4xx a `GET /health` itself can cause, declared since the server sends it there: the 417 problem for an
 * `Expect` other than `100-continue`, which the server answers before any route.
 *
 * @internal
 */
export const healthOperation = (operation: Record<string, unknown>): Record<string, unknown> => {
  declareProtocolProblem(
    operation as unknown as Operation,
    "expectation_failed",
    "An `Expect` header field other than `100-continue`; the connection closes after the reply"
  )
  return operation
}

// Every operation with a body refuses a compressed one before any route (docs/api.md#http-details).
const unsupportedContentEncoding = (operation: Operation): void =>
  declareProtocolProblem(
    operation,
    "unsupported_content_encoding",
    "A request body with a `Content-Encoding` other than `identity`; the connection closes after the reply",
    { "Accept-Encoding": header("`identity`: the only coding a request body may have") }
  )

const referencedSchemas = (document: unknown, schemas: Record<string, unknown>): Set<string> => {
  const seen = new Set<string>()
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item)
    } else if (typeof node === "object" && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string" && value.startsWith("#/components/schemas/")) {
          const name = value.slice("#/components/schemas/".length)
          if (!seen.has(name)) {
            seen.add(name)
            visit(schemas[name])
          }
        } else {
          visit(value)
        }
      }
    }
  }
  visit(document)
  return seen
}

/**
 * The problem codes as a Markdown table, for the document's description.
 *
 * @internal
 */
export const problemCodeTable = (): string =>
  [
    "| `code` | status | when |",
    "| --- | --- | --- |",
    ...Object.entries(ProblemCode.table).map(
      ([code, { when }]) => `| \`${code}\` | ${ProblemStatus.status(code as ProblemCode.ProblemCode)} | ${when} |`
    )
  ].join("\n")

/**
 * The document as a client author reads it. HttpApi documents a 400 for its own payload decoding on every
 * operation; this service decodes payloads itself and answers 422, so the 400 and its schemas go. Every
 * operation with a body declares the 415 of a compressed body. Every
 * reply's `X-Request-Id` and the 503's `Retry-After` are declared. Schemas nothing refers to, and the empty
 * security declarations of the operations and components, are removed; the document's own `security: []` stays:
 * the key travels in the body, which no security scheme describes, and an empty list says so to linters.
 *
 * @internal
 */
export const clientAuthorView = (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths = (spec.paths ?? {}) as Record<string, Record<string, Operation>>
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      delete operation.responses["400"]
      if ((operation as { requestBody?: unknown }).requestBody !== undefined) unsupportedContentEncoding(operation)
      for (const [status, response] of Object.entries(operation.responses)) {
        addHeaders(response, requestIdHeader)
        if (status === "503") addHeaders(response, retryAfterHeader("1 while storage or the rate limiter is away"))
      }
      if (operation.parameters?.length === 0) delete operation.parameters
      if (operation.security?.length === 0) delete operation.security
    }
  }
  const components = (spec.components ?? {}) as { schemas?: Record<string, unknown>; securitySchemes?: object }
  const schemas = components.schemas ?? {}
  const used = referencedSchemas(spec.paths, schemas)
  for (const name of Object.keys(schemas)) {
    if (!used.has(name)) delete schemas[name]
  }
  if (components.securitySchemes !== undefined && Object.keys(components.securitySchemes).length === 0) {
    delete components.securitySchemes
  }
  return spec
}
