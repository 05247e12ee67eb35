// `pnpm pack:check`: the publishable packages as a new user gets them. Each is packed with `pnpm pack` (its
// prepack builds a fresh dist/), its tarball is checked (built JavaScript, types and maps, README, LICENSE; no
// tests; no workspace: or catalog: left in its dependencies), then all are installed with plain `npm install`
// into an empty project outside the workspace, which must import every package in Node (ESM), run the use
// case on SQLite, and type-check under strict NodeNext settings: an index importing every package, each
// README's example, and the client alone without Node's types (it must build for browsers).
//
// Needs the npm registry (the packages' own dependencies) and compiles better-sqlite3 when no prebuilt binary
// can be fetched, so it is a script to run before a release, not part of `pnpm test`.
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const packages = [
  "core",
  "client",
  "sqlite",
  "postgres",
  "rate-limiter-memory",
  "rate-limiter-redis",
  "runtime",
  "conformance",
  ...process.argv.slice(2)
]
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
const work = mkdtempSync(join(tmpdir(), "filedata-pack-check-"))
const tarballs = join(work, "tarballs")
const consumer = join(work, "consumer")
mkdirSync(tarballs)
mkdirSync(consumer)

const problems = []
const check = (condition, message) => {
  if (!condition) problems.push(message)
}
const run = (command, args, options = {}) =>
  execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...options })

// 1. Pack, and look inside each tarball.
const names = {}
for (const dir of packages) {
  const packageDir = join(root, "packages", dir)
  const { name, version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"))
  names[dir] = name
  run("pnpm", ["pack", "--pack-destination", tarballs], { cwd: packageDir })
  const tarball = `${name.slice(1).replace("/", "-")}-${version}.tgz`
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
  console.log(
    `packed ${tarball}: ${entries.length} files; dependencies ${JSON.stringify(manifest.dependencies ?? {})}; peers ${JSON.stringify(manifest.peerDependencies ?? {})}`
  )
}

// 2. Install into an empty project, as a user would.
writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
const files = readdirSync(tarballs).map((file) => join(tarballs, file))
run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...files, "@types/node@^20.19.0"], {
  cwd: consumer,
  stdio: "inherit"
})

const readmeExample = (dir) => {
  const text = readFileSync(join(root, "packages", dir, "README.md"), "utf8")
  const match = /```ts\n([\s\S]*?)```/.exec(text)
  check(match !== null, `${names[dir]}: README has no ts example`)
  return match?.[1] ?? ""
}

// 3. Node (ESM) imports every package and runs the use case on the packed SQLite adapter. The conformance
// suites can only be imported by a test run: vitest runs its README's example, on the packed adapters.
const runnable = packages.filter((dir) => dir !== "conformance")
const imports = runnable.map((dir, i) => `import * as p${i} from "${names[dir]}"`).join("\n")
writeFileSync(
  join(consumer, "smoke.mjs"),
  `${imports}
import { Effect, Layer } from "effect"
const { FileDataReply, Fixture, GetFileData, OperatorStore } = p0
const packages = [${runnable.map((_, i) => `p${i}`).join(", ")}]
for (const namespace of packages) if (Object.keys(namespace).length === 0) throw new Error("empty package")
const ports = Layer.merge(
  p2.SqliteStorage.layer({ filename: ":memory:" }),
  p4.MemoryRateLimiter.layer({ apiKey: { limit: 9, windowMillis: 60000 }, clientAddress: { limit: 9, windowMillis: 60000 } })
)
const fixture = { users: [{ id: "u", apiKeys: ["k"] }], files: [{ id: "f", userId: "u", name: "Form", creationDate: "2024-01-01T00:00:00.000Z" }] }
const file = await Effect.gen(function* () {
  yield* Effect.flatMap(OperatorStore.OperatorStore, (store) => Effect.flatMap(Fixture.decode(fixture), store.importFixture))
  return yield* GetFileData.run({ clientAddress: "10.0.0.1", body: Effect.succeed({ fileId: "f", apiKey: "k" }) }).pipe(
    Effect.flatMap(FileDataReply.toFileData)
  )
}).pipe(Effect.provide(ports), Effect.runPromise)
if (file.name !== "Form") throw new Error("unexpected reply " + JSON.stringify(file))
console.log("node imported " + packages.length + " packages and read " + JSON.stringify(file))
`
)
try {
  process.stdout.write(run(process.execPath, ["smoke.mjs"], { cwd: consumer }))
} catch (error) {
  problems.push(`node: ${error.stderr || error.message}`)
}
if (packages.includes("conformance")) {
  mkdirSync(join(consumer, "test"))
  writeFileSync(join(consumer, "test", "Conformance.test.ts"), readmeExample("conformance"))
  try {
    const output = run(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "--reporter=dot"], { cwd: consumer })
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

// 4. Type-check: every package, every README's example, and the client alone for the browser.
mkdirSync(join(consumer, "src"))
writeFileSync(
  join(consumer, "src", "index.ts"),
  `${packages.map((dir, i) => `import * as p${i} from "${names[dir]}"`).join("\n")}
export const all = [${packages.map((_, i) => `p${i}`).join(", ")}] as const
`
)
for (const dir of packages) writeFileSync(join(consumer, "src", `readme-${dir}.ts`), readmeExample(dir))
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
  join(consumer, "tsconfig.json"),
  JSON.stringify({ compilerOptions: { ...compilerOptions, types: ["node"] }, include: ["src"] })
)
mkdirSync(join(consumer, "browser"))
writeFileSync(join(consumer, "browser", "app.ts"), readmeExample("client"))
writeFileSync(
  join(consumer, "tsconfig.browser.json"),
  JSON.stringify({ compilerOptions: { ...compilerOptions, types: [] }, include: ["browser"] })
)
for (const project of ["tsconfig.json", "tsconfig.browser.json"]) {
  try {
    run(process.execPath, [tsc, "-p", project], { cwd: consumer })
    console.log(`tsc -p ${project}: no errors`)
  } catch (error) {
    problems.push(`tsc -p ${project}:\n${error.stdout}${error.stderr}`)
  }
}

if (problems.length > 0) {
  console.error(`\n${problems.length} problem(s), in ${work}:\n${problems.join("\n")}`)
  process.exit(1)
}
console.log(`\n${packages.length} packages pack, install, import and type-check (${work})`)
