// The client's entry bundled for a browser: it must build with nothing from Node in it.
import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as esbuild from "esbuild"

const entry = fileURLToPath(new URL("../src/index.ts", import.meta.url))
// The core as the tests see it, from its sources: its `exports` name the dist/ a build makes.
const core = fileURLToPath(new URL("../../core/src/index.ts", import.meta.url))
const nodeBuiltins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))

describe("the browser bundle", () => {
  it("bundles for platform browser with no Node built-in module", async () => {
    const result = await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      platform: "browser",
      format: "esm",
      target: "es2022",
      write: false,
      metafile: true,
      alias: { "@filedata/core": core },
      logLevel: "silent"
    })
    expect(result.errors).toEqual([])
    const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path))
    expect(imports.filter((path) => nodeBuiltins.has(path))).toEqual([])
    const inputs = Object.keys(result.metafile.inputs)
    expect(inputs.some((path) => path.includes("@effect/platform"))).toBe(true)
    expect(inputs.filter((path) => /platform-node|@filedata\/core/.test(path))).toEqual([])
    const bundle = result.outputFiles[0]?.text ?? ""
    expect(bundle).not.toMatch(/\brequire\(["']/)
    // The bundle is a working module: its exports are the package's namespaces and the core's it re-exports.
    const loaded = await import(`data:text/javascript;base64,${Buffer.from(bundle).toString("base64")}`)
    expect(Object.keys(loaded).sort()).toEqual([
      "ApiError",
      "ChangesReply",
      "ExportSubmissions",
      "FileData",
      "FileDataApi",
      "FileDataClient",
      "GetChanges",
      "GetFileData",
      "GetSubmissions",
      "ProblemDocument",
      "ProblemStatus",
      "SubmissionsReply",
      "WebhookVerifier"
    ])
    expect(loaded.FileDataApi.version).toBe("0.3.0")
  })
})
