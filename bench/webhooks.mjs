// `node bench/webhooks.mjs`: what one `HttpWebhookSender` sustains on loopback. A receiver process answers 204 at
// once (`/fast`) or never (`/hang`), over http and over https (a self-signed certificate made for the run); the
// sender process runs delivery loops, each with one attempt in flight at a time, for --duration seconds per
// scenario and round. Reports deliveries/s and attempt latency (p50/p99) to the fast receiver alone, then beside
// loops stuck on the hanging one: fewer than the sender's socket bound (256), then more.
// Options: --duration 5  --rounds 3  --loops 100 (fast loops)  --hanging 10,300
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { bundleScript } from "./lib/bundle.mjs"
import { commandLine } from "./lib/options.mjs"
import { root } from "./lib/processes.mjs"

const option = commandLine(import.meta.url, ["duration", "rounds", "loops", "hanging"])
const durationMillis = Number(option("duration", "5")) * 1000
const loops = Number(option("loops", "100"))
const rounds = Number(option("rounds", "3"))
const hanging = option("hanging", "10,300").split(",").map(Number)

const work = join(root, ".bench", "webhooks")
mkdirSync(work, { recursive: true })
const [key, cert] = [join(work, "key.pem"), join(work, "cert.pem")]
execFileSync(
  "openssl",
  [
    ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key],
    ...["-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
  ],
  { stdio: "ignore" }
)

const sender = join(work, "sender.mjs")
await bundleScript("bench/lib/webhook-sender.mjs", sender, { nodePaths: ["packages/webhooks-node/node_modules"] })

const receiver = spawn(process.execPath, [join(root, "bench/lib/webhook-receiver.mjs"), key, cert], {
  stdio: ["ignore", "pipe", "inherit"]
})
const ports = JSON.parse(
  await createInterface({ input: receiver.stdout })
    [Symbol.asyncIterator]()
    .next()
    .then((l) => l.value)
)
const certText = readFileSync(cert, "utf8")

const run = (targets) => {
  const result = spawnSync(
    process.execPath,
    [sender, JSON.stringify({ targets, durationMillis, timeoutMillis: 15_000, cert: certText })],
    { encoding: "utf8" }
  )
  if (result.status !== 0) throw new Error(result.stderr)
  return JSON.parse(result.stdout)
}

// Every scenario once per round, the order reversed every other round so machine drift hits all alike; each
// row is the round with the median deliveries/s.
const fast = (scheme) => `${scheme}://127.0.0.1:${ports[scheme]}/fast`
const scenarios = [
  ...["http", "https"].flatMap((scheme) => [
    { name: `${scheme}: 1 loop`, targets: [{ url: fast(scheme), loops: 1 }] },
    { name: `${scheme}: ${loops} loops`, targets: [{ url: fast(scheme), loops }] }
  ]),
  ...hanging.map((stuck) => ({
    name: `https: ${loops} loops beside ${stuck} hanging`,
    targets: [
      { url: fast("https"), loops },
      { url: `https://127.0.0.1:${ports.https}/hang`, loops: stuck }
    ]
  }))
]
for (const scenario of scenarios) scenario.runs = []
try {
  for (let round = 0; round < rounds; round++) {
    for (const scenario of round % 2 === 0 ? scenarios : [...scenarios].reverse()) {
      scenario.runs.push(run(scenario.targets)[0])
    }
  }
} finally {
  receiver.kill()
}
console.table(
  scenarios.map(({ name, runs }) => {
    const median = [...runs].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(runs.length / 2)]
    return {
      scenario: name,
      "deliveries/s": median.perSecond,
      "each round": runs.map((figures) => figures.perSecond).join(" "),
      "p50 ms": median.p50,
      "p99 ms": median.p99,
      failed: median.notAnswered
    }
  })
)
