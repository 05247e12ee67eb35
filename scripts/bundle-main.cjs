// An app's entry, copied by scripts/bundle.mjs next to its bundle as `main.js`: runs `app.js` compiled with the V8
// code cache the build made from a run of it (`app.cache`), so a start skips most of parsing and compiling
// (docs/performance.md#code-cache). A cache that is missing, or that V8 refuses (another Node, other flags), only
// costs the compile it would have saved. With source maps on, Node's own loader runs the bundle: it maps stack
// traces only for what it compiled itself.
"use strict"
const { readFileSync, writeFileSync } = require("node:fs")
const Module = require("node:module")
const { join } = require("node:path")
const { Script } = require("node:vm")

const file = join(__dirname, "app.js")
const cacheFile = join(__dirname, "app.cache")

// Set only by the build's run that makes the cache; the app never sees it.
const making = process.env.FILEDATA_MAKE_CODE_CACHE === "1"
delete process.env.FILEDATA_MAKE_CODE_CACHE

if (process.sourceMapsEnabled && !making) {
  require(file)
} else {
  let cachedData
  if (!making) {
    try {
      cachedData = readFileSync(cacheFile)
    } catch {
      // No cache: compiled as Node would.
    }
  }
  const script = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file, cachedData })
  const app = new Module(file, module)
  app.filename = file
  app.paths = Module._nodeModulePaths(__dirname)
  // What the run compiled, written as it exits: the start's functions, not only the top level.
  if (making) process.once("exit", () => writeFileSync(cacheFile, script.createCachedData()))
  script.runInThisContext().call(app.exports, app.exports, Module.createRequire(file), app, file, __dirname)
}
