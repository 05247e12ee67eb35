// `pnpm pack:check`: the publishable packages as a new user gets them, and the embedding example run on them
// (docs/embedding.md). Every package under packages/ that is not private is packed with `pnpm pack` (its
// prepack builds a fresh dist/) and its tarball checked (built JavaScript, types and maps, README, LICENSE; no
// tests; no workspace: or catalog: left in its dependencies). apps/example-embedding is packed too, which
// rewrites its workspace: and catalog: ranges as a publish would, and unpacked into a temporary directory
// outside the workspace; the tarballs are installed there with plain `npm install`. In that project:
//   - Node (ESM) imports every package, and vitest runs the conformance suites of its README on the adapters;
//   - tsc checks under strict NodeNext settings an index importing every package and each README's example,
//     and the client's example alone without Node's types (it must build for browsers);
//   - the example is built with its own strict tsconfig and run: the use case in process on the packed SQLite
//     adapter, then the workspace's built server (seeded with the CLI from the example's fixture.json) through
//     the packed client. Its in-process and HTTP replies must be the same, and its refusal AccessDenied;
//   - docs/embedding.md's "Try it" block runs as written, in a directory of its own.
//
// Needs the npm registry (the packages' own dependencies) and compiles better-sqlite3 when no prebuilt binary
// can be fetched; CI runs it after the tests. The temporary directory is removed when every check passed.
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const exampleDir = join(root, "apps", "example-embedding")
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"))
// Every package another project could use; the private ones (packages/testing) serve the tests alone.
const packages = readdirSync(join(root, "packages"))
  .filter((dir) => existsSync(join(root, "packages", dir, "package.json")))
  .filter((dir) => readJson(join(root, "packages", dir, "package.json")).private !== true)
  .sort()
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
const work = mkdtempSync(join(tmpdir(), "filedata-pack-check-"))
const tarballs = join(work, "tarballs")
const consumer = join(work, "example")
mkdirSync(tarballs)
mkdirSync(consumer)

const problems = []
const check = (condition, message) => {
  if (!condition) problems.push(message)
}
const run = (command, args, options = {}) =>
  execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...options })
const compareVersions = (left, right) => {
  const [a, b] = [left, right].map((text) => text.split(".").map(Number))
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i]
  return 0
}
const tarballName = (name, version) => `${name.slice(1).replace("/", "-")}-${version}.tgz`

// 1. Pack, and look inside each tarball.
const names = {}
for (const dir of packages) {
  const packageDir = join(root, "packages", dir)
  const { name, version } = readJson(join(packageDir, "package.json"))
  names[dir] = name
  run("pnpm", ["pack", "--pack-destination", tarballs], { cwd: packageDir })
  const tarball = tarballName(name, version)
  const entries = run("tar", ["-tzf", join(tarballs, tarball)])
    .trim()
    .split("\n")
  for (const required of ["dist/index.js", "dist/index.d.ts", "dist/index.js.map", "README.md", "LICENSE"]) {
    check(entries.includes(`package/${required}`), `${name}: ${required} is not in the tarball`)
  }
  const unwanted = entries.filter((entry) => /\/test\/|\.test\.|tsbuildinfo|tsconfig/.test(entry))
  check(unwanted.length === 0, `${name}: the tarball holds ${unwanted.join(", ")}`)
  const manifest = JSON.parse(run("tar", ["-xzOf", join(tarballs, tarball), "package/package.json"]))
  check(manifest.private !== true, `${name}: private`)
  check(manifest.license !== undefined, `${name}: no license`)
  check(manifest.exports?.["."]?.types?.startsWith("./dist/"), `${name}: exports without types`)
  for (const field of ["dependencies", "peerDependencies"]) {
    for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
      check(!/^(workspace|catalog):/.test(range), `${name}: ${field}.${dependency} is ${range}`)
    }
  }
  // One version story: a declaration is never newer than the package that ships it.
  const declarations = entries.filter((entry) => entry.endsWith(".d.ts"))
  const since = run("tar", ["-xzOf", join(tarballs, tarball), ...declarations], { maxBuffer: 64 * 1024 * 1024 })
  const newer = [...new Set([...since.matchAll(/@since (\d+)\.(\d+)\.(\d+)/g)].map((found) => found[0]))].filter(
    (found) => compareVersions(found.slice("@since ".length), version) > 0
  )
  check(newer.length === 0, `${name}: declarations say ${newer.join(", ")}, the package is ${version}`)
  console.log(
    `packed ${tarball}: ${entries.length} files; dependencies ${JSON.stringify(manifest.dependencies ?? {})}; peers ${JSON.stringify(manifest.peerDependencies ?? {})}`
  )
}

// 2. The example, as its tarball would be published, is the project everything is installed into, as a user
// would: plain npm, every tarball standing in for the registry's copy of its package.
const example = readJson(join(exampleDir, "package.json"))
run("pnpm", ["pack", "--pack-destination", work], { cwd: exampleDir })
run("tar", ["-xzf", join(work, tarballName(example.name, example.version)), "-C", consumer, "--strip-components=1"])
const files = packages.map((dir) =>
  join(tarballs, tarballName(names[dir], readJson(join(root, "packages", dir, "package.json")).version))
)
run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...files], { cwd: consumer, stdio: "inherit" })

const readmeExample = (dir) => {
  const text = readFileSync(join(root, "packages", dir, "README.md"), "utf8")
  const match = /```ts\n([\s\S]*?)```/.exec(text)
  check(match !== null, `${names[dir]}: README has no ts example`)
  return match?.[1] ?? ""
}

// 3. Node (ESM) imports every package. The conformance suites can only be imported by a test run: vitest runs
// its README's example, on the packed adapters.
const checks = join(consumer, "checks")
mkdirSync(join(checks, "node"), { recursive: true })
const runnable = packages.filter((dir) => dir !== "conformance")
writeFileSync(
  join(checks, "imports.mjs"),
  `${runnable.map((dir, i) => `import * as p${i} from "${names[dir]}"`).join("\n")}
const packages = { ${runnable.map((dir, i) => `"${names[dir]}": p${i}`).join(", ")} }
for (const [name, namespace] of Object.entries(packages)) {
  if (Object.keys(namespace).length === 0) throw new Error(name + " exports nothing")
}
console.log("node imported " + Object.keys(packages).join(", "))
`
)
try {
  process.stdout.write(run(process.execPath, [join(checks, "imports.mjs")], { cwd: consumer }))
} catch (error) {
  problems.push(`node: ${error.stderr || error.message}`)
}
if (packages.includes("conformance")) {
  mkdirSync(join(checks, "test"))
  writeFileSync(join(checks, "test", "Conformance.test.ts"), readmeExample("conformance"))
  // The storage property imports a hundred fixtures: past vitest's default 5 s on a busy machine, so the same
  // 30 s per test as the workspace's vitest.config.ts.
  const vitest = ["node_modules/vitest/vitest.mjs", "run", "--reporter=dot", "checks/test"]
  try {
    const output = run(process.execPath, vitest, { cwd: consumer })
    console.log(
      `vitest ran the conformance suites: ${output
        .trim()
        .split("\n")
        .filter((line) => /Tests/.test(line))
        .join(" ")}`
    )
  } catch (error) {
    problems.push(`vitest: ${error.stdout}${error.stderr}`)
  }
}

// 4. Type-check: every package, every README's example, the client alone for the browser, and the example with
// its own (stricter) settings, as its build.
writeFileSync(
  join(checks, "node", "index.ts"),
  `${packages.map((dir, i) => `import * as p${i} from "${names[dir]}"`).join("\n")}
export const all = [${packages.map((_, i) => `p${i}`).join(", ")}] as const
`
)
for (const dir of packages) writeFileSync(join(checks, "node", `readme-${dir}.ts`), readmeExample(dir))
const embedding = readFileSync(join(root, "docs", "embedding.md"), "utf8")
for (const [i, [, code]] of [...embedding.matchAll(/```ts(?: runnable)?\n([\s\S]*?)```/g)].entries()) {
  writeFileSync(join(checks, "node", `embedding-${i + 1}.ts`), code)
}
mkdirSync(join(checks, "browser"))
writeFileSync(join(checks, "browser", "app.ts"), readmeExample("client"))
const compilerOptions = {
  strict: true,
  module: "NodeNext",
  moduleResolution: "NodeNext",
  target: "ES2022",
  lib: ["ES2023", "DOM"],
  // Effect's own declaration files do not check on their own; its templates set this too.
  skipLibCheck: true,
  noEmit: true
}
writeFileSync(
  join(checks, "tsconfig.json"),
  JSON.stringify({ compilerOptions: { ...compilerOptions, types: ["node"] }, include: ["node"] })
)
writeFileSync(
  join(checks, "tsconfig.browser.json"),
  JSON.stringify({ compilerOptions: { ...compilerOptions, types: [] }, include: ["browser"] })
)
for (const project of ["checks/tsconfig.json", "checks/tsconfig.browser.json"]) {
  try {
    run(process.execPath, [tsc, "-p", project], { cwd: consumer })
    console.log(`tsc -p ${project}: no errors`)
  } catch (error) {
    problems.push(`tsc -p ${project}:\n${error.stdout}${error.stderr}`)
  }
}
let exampleBuilt = false
try {
  run("npm", ["run", "--silent", "build"], { cwd: consumer })
  exampleBuilt = true
  console.log("the example builds (npm run build)")
} catch (error) {
  problems.push(`the example's build:\n${error.stdout}${error.stderr}`)
}

// 5. The example against a running server. The server is an app of this workspace, not a package: its build
// (brought up to date first) serves a database the CLI seeds with the example's fixture.
const startServer = async (databaseUrl) => {
  const env = { PATH: process.env.PATH, DATABASE_URL: databaseUrl, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn" }
  const server = spawn(process.execPath, [join(root, "apps/server/dist/bundle/main.js")], {
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const url = await new Promise((resolveUrl, reject) => {
    const seen = (chunk) => {
      output += chunk
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match !== null) resolveUrl(match[1])
    }
    server.stdout.setEncoding("utf8").on("data", seen)
    server.stderr.setEncoding("utf8").on("data", seen)
    server.once("exit", (code) => reject(new Error(`the server exited with ${code} before listening:\n${output}`)))
  })
  const stop = () =>
    new Promise((resolveStop) => {
      if (server.exitCode !== null || server.signalCode !== null) return resolveStop()
      server.once("exit", () => resolveStop())
      server.kill("SIGTERM")
    })
  return { url, stop }
}

if (exampleBuilt) {
  run(process.execPath, [join(root, "scripts/run.mjs"), "--build-only"], { stdio: "inherit" })
  const databaseUrl = `file:${join(work, "server", "filedata.db")}`
  const cli = join(root, "apps/cli/dist/bundle/main.js")
  run(process.execPath, [cli, "import", join(consumer, "fixture.json")], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" }
  })
  const server = await startServer(databaseUrl)
  try {
    const output = run("npm", ["start", "--silent"], {
      cwd: consumer,
      env: { ...process.env, FILEDATA_URL: server.url }
    })
    process.stdout.write(`the example, calling ${server.url}:\n${output}`)
    const line = (prefix) =>
      output
        .split("\n")
        .find((text) => text.startsWith(prefix))
        ?.slice(prefix.length)
    check(line("in process: ") !== undefined, "the example printed no in-process reply")
    check(line("over HTTP: ") === line("in process: "), "the example's HTTP reply differs from its in-process one")
    check(line("refused: ")?.startsWith("AccessDenied (403 access_denied)"), "the example's refusal is no AccessDenied")
    const file = JSON.parse(line("in process: ") ?? "{}")
    // The incremental read gives each submission its id first; without it, the File reply's submission.
    const pages = JSON.parse(line("page by page: ") ?? "[]")
    check(
      pages.every((submission) => /^sub_[\w-]+$/.test(submission.id)) &&
        JSON.stringify(pages.map(({ id: _id, ...submission }) => submission)) === JSON.stringify(file.submissions),
      "the example's pages are not the file's submissions, each with its id"
    )
    const feed = JSON.parse(line("feed: ") ?? "[]")
    check(
      JSON.stringify(feed) === JSON.stringify(pages.map((submission) => ["submission.created", submission.id])),
      "the example's feed is not a created change for each submission, with its id"
    )
    check(line("invalid: ") === "ValidationFailed /limit", "the example's limit 0 is not refused as ValidationFailed")
  } catch (error) {
    problems.push(`the example: ${error.stdout ?? ""}${error.stderr ?? error.message}`)
  } finally {
    await server.stop()
  }
}

// 6. docs/embedding.md's "Try it" block, run as written by `sh` in a directory of its own with FILEDATA set to
// the repository: it packs what it needs itself, installs with npm, compiles with its own tsconfig and runs.
const tryIt = /```sh try-it\n([\s\S]*?)```/.exec(readFileSync(join(root, "docs", "embedding.md"), "utf8"))?.[1]
check(tryIt !== undefined, "docs/embedding.md: no sh try-it block")
if (tryIt !== undefined) {
  const tryDir = join(work, "try-it")
  mkdirSync(tryDir)
  try {
    const output = run("sh", ["-c", tryIt], { cwd: tryDir, env: { ...process.env, FILEDATA: root } })
    const reply = JSON.parse(output.trim().split("\n").at(-1) ?? "")
    check(reply.name === "Contact form", `docs/embedding.md's try-it printed ${output}`)
    console.log(`docs/embedding.md's try-it block ran: ${JSON.stringify(reply)}`)
  } catch (error) {
    problems.push(`docs/embedding.md's try-it: ${error.stdout ?? ""}${error.stderr || error.message}`)
  }
}

if (problems.length > 0) {
  console.error(`\n${problems.length} problem(s), in ${work}:\n${problems.join("\n")}`)
  process.exit(1)
}
rmSync(work, { recursive: true, force: true })
console.log(`\n${packages.length} packages pack, install with npm, import and type-check; the example runs on them`)
