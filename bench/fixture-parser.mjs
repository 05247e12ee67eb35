// `node bench/fixture-parser.mjs`: reads the huge fixture (1,000,000 submissions, as `pnpm bench` makes it)
// through the hand-written tokenizer and FixtureReader of @filedata/fixture, and through a reader built on
// @streamparser/json, each run in a process of its own for its wall time and peak RSS. Before timing, both
// readers must hand out the same entries for a smaller fixture. The tokenizers alone (no reader, no decoding)
// are timed too, to show where the time goes. Figures and the decision: packages/fixture/README.md.
// Options: --runs 3  --submissions 1000000  --batch 1000
// @streamparser/json is not a dependency of the project (the hand-written reader won); the script takes it from
// .bench/streamparser, where `npm install --prefix .bench/streamparser @streamparser/json@0.0.26` puts it.

import { spawnSync } from "node:child_process"
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { isDeepStrictEqual } from "node:util"
import { writeFixture } from "./lib/fixture.mjs"
import { build, root } from "./lib/processes.mjs"

const work = join(root, ".bench")
const option = (name, fallback) => {
  const index = process.argv.indexOf(`--${name}`)
  return index === -1 ? fallback : process.argv[index + 1]
}
const runs = Number(option("runs", "3"))
const submissions = Number(option("submissions", "1000000"))
const batchSize = Number(option("batch", "1000"))
const chunkSize = 64 * 1024
const streamparserDir = join(work, "streamparser")
const streamparserVersion = "0.0.26"
// Its strings gathered in a buffer rather than piece by piece: about a third faster here than its default.
const streamparserOptions = { stringBufferSize: 64 * 1024 }

// Effect as the workspace's packages load it (ESM, one copy), reached through @filedata/fixture.
const effect = async () => {
  const fromFixture = createRequire(join(root, "packages/fixture/package.json"))
  const dir = dirname(fromFixture.resolve("effect/package.json"))
  const entry = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).exports["."].import
  return import(pathToFileURL(join(dir, entry)).href)
}

const streamparser = async () => {
  const entry = join(streamparserDir, "node_modules/@streamparser/json/dist/mjs/index.js")
  if (!existsSync(entry)) {
    console.error(
      `@streamparser/json is missing: npm install --prefix .bench/streamparser @streamparser/json@${streamparserVersion}`
    )
    process.exit(1)
  }
  return import(pathToFileURL(entry).href)
}

const load = async () => {
  const { Chunk, Effect, Stream } = await effect()
  const { Fixture } = await import(pathToFileURL(join(root, "packages/core/dist/index.js")).href)
  const { FixtureDocument, FixtureReader } = await import(
    pathToFileURL(join(root, "packages/fixture/dist/index.js")).href
  )
  return { Chunk, Effect, Stream, Fixture, FixtureDocument, FixtureReader }
}

const bytesOf = (Stream, file) =>
  Stream.fromAsyncIterable(createReadStream(file, { highWaterMark: chunkSize }), (error) => error)

// (a) The package's reader: the hand-written tokenizer, entries decoded as they complete.
const handWritten = ({ Stream, FixtureReader }, file) => FixtureReader.fromBytes(bytesOf(Stream, file), { batchSize })

// (b) The same entries from @streamparser/json. Its parser keeps whatever an emitted value contains, so a file
// cannot be emitted whole without holding all its submissions: submissions and the file's own members are
// emitted one by one, and a file ends when a value of the next file (or the document's end) arrives. Unknown
// members of a file are not seen at all, unlike in (a); for the fixtures measured here that changes nothing.
const streamparserReader = ({ Effect, Stream, Fixture, FixtureDocument }, { JSONParser }, file) =>
  Stream.suspend(() => {
    const members = ["id", "userId", "name", "creationDate", "publicAvailability", "SubmissionCounter", "VisitCounter"]
    const parser = new JSONParser({
      ...streamparserOptions,
      paths: ["$.users.*", "$.files.*.submissions.*", ...members.map((member) => `$.files.*.${member}`)],
      keepStack: false
    })
    const duplicates = FixtureDocument.makeDuplicateCheck()
    const issues = []
    let entries = []
    let batch = []
    let users = 0
    let current = -1
    let header = {}
    let count = 0
    let failure
    const flush = () => {
      if (batch.length > 0) entries.push(Fixture.FixtureEntry.Submissions({ submissions: batch }))
      batch = []
    }
    const endFile = () => {
      if (current < 0) return
      const result = FixtureDocument.decodeFileHeader(header, current, count)
      if (result._tag === "Left") issues.push(...result.left)
      else if (duplicates.file(result.right, current)) entries.push(Fixture.FixtureEntry.File({ file: result.right }))
    }
    const enter = (index) => {
      if (index === current) return
      endFile()
      current = index
      header = {}
      count = 0
    }
    parser.onValue = ({ value, key, stack }) => {
      if (stack[1].key === "users") {
        const index = users++
        const result = FixtureDocument.decodeUser(value, index)
        if (result._tag === "Left") issues.push(...result.left)
        else if (duplicates.user(result.right, index)) entries.push(Fixture.FixtureEntry.User({ user: result.right }))
        return
      }
      enter(stack[2].key)
      if (stack.length === 4) {
        const result = FixtureDocument.decodeSubmission(value, current, count++)
        if (result._tag === "Left") issues.push(...result.left)
        else {
          batch.push({ file: current, createdDate: result.right.createdDate, contentJson: result.right.contentJson })
          if (batch.length >= batchSize) flush()
        }
      } else {
        header[key] = value
      }
    }
    parser.onError = (error) => {
      failure = error
    }
    const take = () => {
      if (failure !== undefined) throw failure
      const out = entries
      entries = []
      return out
    }
    return Stream.concat(
      Stream.mapConcat(bytesOf(Stream, file), (chunk) => {
        parser.write(chunk)
        return take()
      }),
      Stream.fromIterableEffect(
        Effect.suspend(() => {
          if (!parser.isEnded) parser.end()
          endFile()
          issues.push(...duplicates.issues())
          if (issues.length > 0) return Effect.fail(new Fixture.FixtureInvalid({ issues }))
          flush()
          return Effect.succeed(take())
        })
      )
    )
  })

// The tokenizers alone, every token handed to a handler that does nothing.
const tokenizeHandWritten = async (file) => {
  const { JsonTokenizer } = await import(pathToFileURL(join(root, "packages/core/dist/shared/JsonTokenizer.js")).href)
  const none = () => {}
  const tokenizer = new JsonTokenizer({
    startObject: none,
    endObject: none,
    startArray: none,
    endArray: none,
    key: none,
    value: none
  })
  const decoder = new TextDecoder()
  for await (const chunk of createReadStream(file, { highWaterMark: chunkSize })) {
    const error = tokenizer.write(decoder.decode(chunk, { stream: true }))
    if (error !== undefined) throw new Error(error.detail)
  }
  if (tokenizer.end() !== undefined) throw new Error("malformed")
}

const tokenizeStreamparser = async (file) => {
  const { Tokenizer } = await streamparser()
  const tokenizer = new Tokenizer(streamparserOptions)
  tokenizer.onToken = () => {}
  for await (const chunk of createReadStream(file, { highWaterMark: chunkSize })) tokenizer.write(chunk)
  if (!tokenizer.isEnded) tokenizer.end()
}

const readers = { "hand-written": handWritten, streamparser: streamparserReader }
const tokenizers = {
  "hand-written tokenizer only": tokenizeHandWritten,
  "streamparser tokenizer only": tokenizeStreamparser
}

const entriesOf = async (modules, name, file) =>
  name === "streamparser" ? streamparserReader(modules, await streamparser(), file) : handWritten(modules, file)

// In the child: one way of reading, timed from its first byte to its last entry.
const child = async (name, file) => {
  const began = performance.now()
  const cpuBefore = process.cpuUsage()
  let count = 0
  if (tokenizers[name] !== undefined) {
    await tokenizers[name](file)
  } else {
    const modules = await load()
    const { Effect, Stream } = modules
    const stream = await entriesOf(modules, name, file)
    await Effect.runPromise(
      Stream.runForEach(stream, (entry) =>
        Effect.sync(() => {
          count += entry._tag === "Submissions" ? entry.submissions.length : 0
        })
      )
    )
  }
  const seconds = (performance.now() - began) / 1000
  const { user, system } = process.cpuUsage(cpuBefore)
  process.stdout.write(JSON.stringify({ seconds, cpu: (user + system) / 1e6, submissions: count }))
}

const check = async (file) => {
  const modules = await load()
  const { Chunk, Effect, Stream } = modules
  const collect = async (name) =>
    Chunk.toReadonlyArray(await Effect.runPromise(Stream.runCollect(await entriesOf(modules, name, file)))).map(
      (entry) => JSON.parse(JSON.stringify(entry))
    )
  const [a, b] = [await collect("hand-written"), await collect("streamparser")]
  if (!isDeepStrictEqual(a, b)) throw new Error("the two readers hand out different entries")
  const total = a.reduce((sum, entry) => sum + (entry._tag === "Submissions" ? entry.submissions.length : 0), 0)
  console.error(`check: both readers hand out the same ${a.length} entries (${total} submissions)`)
}

const timed = (name, file) => {
  const result = spawnSync(
    "/usr/bin/time",
    ["-f", "%e %M", process.execPath, join(root, "bench/fixture-parser.mjs"), "--child", name, file],
    { cwd: root, encoding: "utf8" }
  )
  if (result.status !== 0) throw new Error(`${name} failed:\n${result.stdout}\n${result.stderr}`)
  const [wall, kilobytes] = result.stderr.trim().split("\n").at(-1).split(" ").map(Number)
  return { ...JSON.parse(result.stdout), wall, rssMiB: kilobytes / 1024 }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const main = async () => {
  if (process.argv.includes("--child")) {
    const index = process.argv.indexOf("--child")
    return child(process.argv[index + 1], process.argv[index + 2])
  }
  await streamparser()
  build()
  mkdirSync(work, { recursive: true })
  const small = join(work, "fixture-parser-check.json")
  if (!existsSync(small)) await writeFixture(small, { files: 20, submissionsPerFile: 2500, users: 7 })
  await check(small)
  const huge = join(work, submissions === 1_000_000 ? "huge.json" : `huge-${submissions}.json`)
  if (!existsSync(huge)) {
    console.error("generating the huge fixture...")
    await writeFixture(huge, { files: 1, submissionsPerFile: submissions, users: 1 })
  }
  console.error(`${huge}: ${(statSync(huge).size / 2 ** 20).toFixed(0)} MiB`)
  const names = [...Object.keys(readers), ...Object.keys(tokenizers)]
  const results = Object.fromEntries(names.map((name) => [name, []]))
  for (let run = 0; run < runs; run++) {
    // Alternating the order, so drift of the machine hits every way alike.
    for (const name of run % 2 === 0 ? names : [...names].reverse()) {
      const result = timed(name, huge)
      results[name].push(result)
      console.error(
        `run ${run + 1} ${name}: ${result.seconds.toFixed(2)} s reading (${result.cpu.toFixed(2)} s CPU), ` +
          `${result.wall.toFixed(2)} s wall, ` +
          `peak RSS ${result.rssMiB.toFixed(0)} MiB`
      )
    }
  }
  const rows = names.map((name) => {
    const list = results[name]
    const figure = (pick) => median(list.map(pick)).toFixed(2)
    return `| ${name} | ${figure((r) => r.seconds)} | ${figure((r) => r.cpu)} | ${figure((r) => r.wall)} | ${Math.max(...list.map((r) => r.rssMiB)).toFixed(0)} |`
  })
  const table = [
    `| ${submissions.toLocaleString("en")} submissions, median of ${runs} runs | reading s | reading CPU s | process wall s | peak RSS MiB (max) |`,
    "| --- | --- | --- | --- | --- |",
    ...rows
  ].join("\n")
  console.log(table)
  writeFileSync(join(work, "fixture-parser.md"), `${table}\n`)
}

await main()
