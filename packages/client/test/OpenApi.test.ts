// The OpenAPI document as a client author reads it: valid for a standard validator, no internal schemas,
// every header field and problem declared, and a client generated from it by a common generator compiles.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import * as Schema from "effect/Schema"
import openapiTS, { astToString } from "openapi-typescript"
import ts from "typescript"
import { ApiError, ChangesReply, FileDataApi } from "../src/index.js"

const spec = OpenApi.fromApi(FileDataApi.FileDataApi) as unknown as Record<string, any>
const packageVersion = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version

const operations = (): Array<[string, Record<string, any>]> =>
  Object.entries(spec.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]): [string, Record<string, any>] => [`${method} ${path}`, operation])
  )

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document for a standard validator", async () => {
    const result = await new Validator().validate(structuredClone(spec))
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
  })

  it("has the package's version, no security scheme, the key in the body said so, and no internal schema", () => {
    expect(spec.info.version).toBe(packageVersion)
    expect(FileDataApi.version).toBe(packageVersion)
    expect(spec.components.securitySchemes).toBeUndefined()
    // Declared empty, not left undefined: the key travels in the body, which no security scheme describes.
    expect(spec.security).toEqual([])
    expect(spec.info.description).toContain("`apiKey`")
    expect(spec.info.description).toContain("`security: []`")
    for (const [name, operation] of operations()) expect(operation.security, name).toBeUndefined()
    const text = JSON.stringify(spec)
    for (const internal of [
      "PropertyKey",
      "HttpApiDecodeError",
      '"Issue"',
      "minLength(",
      "maxLength(",
      "maxItems(",
      '"title":"int"'
    ]) {
      expect(text).not.toContain(internal)
    }
    expect(Object.keys(spec.components.schemas).sort()).toEqual([
      "AccessDenied",
      "Change",
      "ChangesPage",
      "Deliveries",
      "Delivery",
      "EventNotFound",
      "ExportFormat",
      "ExportRequest",
      "FileData",
      "FileNotFound",
      "GetChangesRequest",
      "GetFileDataRequest",
      "GetSubmissionsRequest",
      "Health",
      "IdentifiedSubmission",
      "InternalError",
      "RateLimited",
      "RateLimiterCounting",
      "RotatedSecret",
      "ServiceUnavailable",
      "Submission",
      "SubmissionCreated",
      "SubmissionErased",
      "SubmissionsPage",
      "ValidationFailed",
      "ValidationIssue",
      "Webhook",
      "WebhookList",
      "WebhookNotFound"
    ])
  })

  it("names its license by SPDX identifier, the servers a copy of it can call, and what each tag holds", () => {
    expect(spec.info.license).toEqual({ name: "MIT", identifier: "MIT" })
    // First the server that served the document, which Swagger UI calls; then any address, for a copy.
    expect(spec.servers.map((server: { url: string }) => server.url)).toEqual(["/", "{scheme}://{host}:{port}"])
    expect(spec.servers[1].variables).toEqual({
      scheme: { default: "http", enum: ["http", "https"] },
      host: { default: "127.0.0.1" },
      port: { default: "3000" }
    })
    expect(spec.tags.map((tag: { name: string }) => tag.name)).toEqual(["files", "webhooks", "system"])
    for (const tag of spec.tags) expect(tag.description, tag.name).toMatch(/\S{3}/)
  })

  it("declares for /health the 417 problem a request to it can get, and no other 4xx", () => {
    const health = spec.paths["/health"].get
    expect(Object.keys(health.responses).sort()).toEqual(["200", "417", "500", "503"])
    const refused = health.responses["417"]
    expect(Object.keys(refused.content)).toEqual(["application/problem+json"])
    expect(refused.content["application/problem+json"].schema).toMatchObject({
      required: ["type", "title", "status", "detail", "code"],
      properties: {
        type: { enum: ["urn:filedata:problem:expectation_failed"] },
        title: { enum: ["Expectation failed"] },
        status: { enum: [417] },
        code: { enum: ["expectation_failed"] }
      }
    })
  })

  it("declares every reply's header fields, the 500 and 503 problems, and no 400", () => {
    for (const [name, operation] of operations()) {
      const statuses = Object.keys(operation.responses)
      expect(statuses, name).toContain("500")
      expect(statuses, name).toContain("503")
      expect(statuses, name).not.toContain("400")
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        expect(Object.keys(response.headers), `${name} ${status}`).toContain("X-Request-Id")
        if (Number(status) >= 400)
          expect(Object.keys(response.content), `${name} ${status}`).toEqual(["application/problem+json"])
      }
      expect(Object.keys(operation.responses["503"].headers)).toContain("Retry-After")
    }
    for (const [path, request, reply] of [
      [FileDataApi.fileDataPath, "GetFileDataRequest", "FileData"],
      [FileDataApi.submissionsPath, "GetSubmissionsRequest", "SubmissionsPage"],
      [FileDataApi.changesPath, "GetChangesRequest", "ChangesPage"]
    ] as const) {
      const operation = spec.paths[path].post
      expect(Object.keys(operation.responses).sort(), path).toEqual(["200", "403", "404", "415", "422", "500", "503"])
      // A compressed body is refused before any route, so before any count: its 415 has no RateLimit fields.
      const { "415": unsupportedCoding, ...counted } = operation.responses
      for (const response of Object.values<any>(counted)) {
        expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(["RateLimit", "RateLimit-Policy"]))
      }
      expect(Object.keys(unsupportedCoding.headers).sort()).toEqual(["Accept-Encoding", "X-Request-Id"])
      expect(unsupportedCoding.content["application/problem+json"].schema.properties.code.enum).toEqual([
        "unsupported_content_encoding"
      ])
      expect(Object.keys(operation.responses["422"].headers)).toContain("Retry-After")
      expect(operation.requestBody.content["application/json"].schema).toEqual({
        $ref: `#/components/schemas/${request}`
      })
      expect(operation.responses["200"].content["application/json"].schema).toEqual({
        $ref: `#/components/schemas/${reply}`
      })
    }
  })

  it("describes the export: its request, CSV and NDJSON bodies, and the attachment's name", () => {
    const operation = spec.paths[FileDataApi.exportPath].post
    expect(Object.keys(operation.responses).sort()).toEqual(["200", "403", "404", "415", "422", "500", "503"])
    expect(operation.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/ExportRequest"
    })
    const ok = operation.responses["200"]
    expect(Object.keys(ok.content).sort()).toEqual(["application/x-ndjson", "text/csv; charset=utf-8"])
    expect(Object.keys(ok.headers)).toEqual(expect.arrayContaining(["Content-Disposition", "RateLimit"]))
    expect(Object.keys(operation.responses["422"].headers)).toContain("Retry-After")
    const request = spec.components.schemas.ExportRequest
    expect(request.required).toEqual(["fileId", "apiKey", "format"])
    expect(request.additionalProperties).toBe(false)
    expect(request.properties.format).toEqual({ $ref: "#/components/schemas/ExportFormat" })
    expect(spec.components.schemas.ExportFormat).toMatchObject({ enum: ["csv", "ndjson"] })
    expect(request.properties.since).toMatchObject({ type: "string", format: "date-time" })
  })

  it("describes the incremental read's bounds and reply", () => {
    const request = spec.components.schemas.GetSubmissionsRequest
    expect(request.required).toEqual(["fileId", "apiKey"])
    expect(request.additionalProperties).toBe(false)
    expect(request.properties.since).toMatchObject({ type: "string", format: "date-time" })
    expect(request.properties.until).toMatchObject({ type: "string", format: "date-time" })
    expect(request.properties.after).toMatchObject({ type: "string", minLength: 1 })
    expect(request.properties.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 10_000 })
    const page = spec.components.schemas.SubmissionsPage
    expect(page.required).toEqual(["submissions", "next", "hasMore"])
    expect(page.properties.submissions.items).toEqual({ $ref: "#/components/schemas/IdentifiedSubmission" })
    expect(spec.components.schemas.IdentifiedSubmission.required).toEqual(["id", "createdDate", "content"])
  })

  it("describes the change feed's request and its two kinds of change", () => {
    const request = spec.components.schemas.GetChangesRequest
    expect(request.required).toEqual(["fileId", "apiKey"])
    expect(Object.keys(request.properties)).toEqual(["fileId", "apiKey", "after", "limit", "wait"])
    expect(request.additionalProperties).toBe(false)
    expect(request.properties.after).toMatchObject({ type: "string", minLength: 1 })
    expect(request.properties.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 10_000 })
    expect(request.properties.wait).toMatchObject({ type: "integer", minimum: 0, maximum: 30 })
    const page = spec.components.schemas.ChangesPage
    expect(page.required).toEqual(["changes", "next", "hasMore"])
    expect(page.properties.changes.items).toEqual({ $ref: "#/components/schemas/Change" })
    expect(spec.components.schemas.Change.anyOf).toEqual([
      { $ref: "#/components/schemas/SubmissionCreated" },
      { $ref: "#/components/schemas/SubmissionErased" }
    ])
    expect(spec.components.schemas.SubmissionCreated).toMatchObject({
      required: ["type", "id", "createdDate", "content"],
      properties: { type: { enum: ["submission.created"] } }
    })
    expect(spec.components.schemas.SubmissionErased).toMatchObject({
      required: ["type", "id"],
      properties: { type: { enum: ["submission.erased"] } }
    })
    // The example decodes as the reply it illustrates.
    expect(Schema.decodeUnknownSync(ChangesReply.ChangesPage)(page.examples[0])).toEqual(page.examples[0])
  })

  it("caps a validation problem's errors at issueLimit, counts the rest in omitted, and bounds fileId", () => {
    const validation = spec.components.schemas.ValidationFailed
    expect(validation.required).not.toContain("omitted")
    expect(validation.properties.errors).toMatchObject({ type: "array", maxItems: ApiError.issueLimit })
    expect(validation.properties.omitted).toMatchObject({ type: "integer", minimum: 1 })
    expect(spec.components.schemas.GetFileDataRequest.properties.fileId).toMatchObject({
      type: "string",
      minLength: 1,
      maxLength: 256
    })
  })

  it("lists every problem code", () => {
    for (const code of Object.keys(ApiError.problemCodes)) {
      expect(spec.info.description).toContain(`\`${code}\``)
    }
  })

  // The examples come from the core's table, apart from the schemas they illustrate: they must still decode.
  it("shows for each problem an example that decodes to its typed failure", () => {
    const problems = {
      ValidationFailed: FileDataApi.ValidationProblem,
      RateLimited: FileDataApi.RateLimitedProblem,
      AccessDenied: FileDataApi.AccessDeniedProblem,
      FileNotFound: FileDataApi.FileNotFoundProblem,
      WebhookNotFound: FileDataApi.WebhookNotFoundProblem,
      EventNotFound: FileDataApi.EventNotFoundProblem,
      ServiceUnavailable: FileDataApi.UnavailableProblem,
      InternalError: FileDataApi.InternalProblem
    }
    for (const [name, problem] of Object.entries(problems)) {
      const [example] = spec.components.schemas[name].examples
      const decoded = Schema.decodeUnknownSync(problem as Schema.Schema<unknown, unknown>)(example)
      expect(decoded).toMatchObject({ _tag: name, ...example })
    }
  })

  it("generates a client with openapi-typescript that compiles under strict NodeNext", async () => {
    const generated = astToString(await openapiTS(structuredClone(spec) as never))
    const dir = mkdtempSync(join(tmpdir(), "filedata-openapi-"))
    writeFileSync(join(dir, "schema.d.ts"), generated)
    writeFileSync(
      join(dir, "use.ts"),
      [
        'import type { components, paths } from "./schema.js"',
        'type Operation = paths["/api/v1/file-data"]["post"]',
        'export const body: NonNullable<Operation["requestBody"]>["content"]["application/json"] = { fileId: "f", apiKey: "k" }',
        'export const count = (file: Operation["responses"][200]["content"]["application/json"]): number =>',
        "  file.SubmissionCounter + file.submissions.length",
        'export const wait = (problem: components["schemas"]["RateLimited"]): number => problem.retryAfter',
        'export const pointers = (problem: components["schemas"]["ValidationFailed"]): Array<string> =>',
        "  problem.errors.map((issue) => issue.pointer)",
        'export const unlisted = (problem: components["schemas"]["ValidationFailed"]): number => problem.omitted ?? 0',
        'export const denied: components["schemas"]["AccessDenied"]["code"] = "access_denied"',
        'type Sync = paths["/api/v1/file-data/submissions"]["post"]',
        'export const page: NonNullable<Sync["requestBody"]>["content"]["application/json"] = {',
        '  fileId: "f", apiKey: "k", since: "2024-01-01T00:00:00Z", until: "2024-02-01T00:00:00Z", after: "c", limit: 10',
        "}",
        'export const resume = (reply: Sync["responses"][200]["content"]["application/json"]): string | undefined =>',
        "  reply.hasMore ? reply.next : reply.submissions[0]?.createdDate"
      ].join("\n")
    )
    const program = ts.createProgram([join(dir, "use.ts")], {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      // A Node project's: no DOM, whose declarations were most of the compile.
      lib: ["lib.es2022.d.ts"],
      types: []
    })
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    expect(diagnostics).toEqual([])
  })
})
