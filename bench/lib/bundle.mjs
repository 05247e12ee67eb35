// Bundles a bench script that imports the workspace's packages into one ES module, taking each `@filedata/*`
// package from its TypeScript sources (no build needed) and the rest from `nodePaths`.
import { join } from "node:path"
import * as esbuild from "esbuild"
import { root } from "./processes.mjs"

// `require` is defined in the bundle for CommonJS packages that require Node's modules (pg), which an ES module
// bundle cannot do otherwise.
export const bundleScript = (entry, outfile, { nodePaths = [], external = [] } = {}) =>
  esbuild.build({
    absWorkingDir: root,
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "error",
    external,
    banner: {
      js: 'import { createRequire as bundleRequire } from "node:module"; const require = bundleRequire(import.meta.url);'
    },
    nodePaths: nodePaths.map((path) => join(root, path)),
    plugins: [
      {
        name: "workspace",
        setup(build) {
          build.onResolve({ filter: /^@filedata\/([\w-]+)$/ }, (args) => ({
            path: join(root, "packages", args.path.slice("@filedata/".length), "src", "index.ts")
          }))
        }
      }
    ]
  })
