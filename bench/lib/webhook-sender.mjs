// The sender side of `bench/webhooks.mjs`, bundled from the TypeScript sources: `HttpWebhookSender` as the server
// makes it, driven by `loops` delivery loops per target, each with one attempt in flight at a time (the contract's
// "one at a time per webhook"), for `durationMillis`. Prints what each target's loops got, as JSON.
import { HttpWebhookSender } from "@filedata/webhooks-node"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

const { targets, durationMillis, timeoutMillis, cert, maxSockets } = JSON.parse(process.argv[2])
const body = JSON.stringify({
  type: "submissions.created",
  timestamp: new Date().toISOString(),
  data: {
    fileId: "file-1",
    SubmissionCounter: 1,
    VisitCounter: 1,
    submissions: [{ createdDate: new Date().toISOString(), content: { email: "a@example.com", message: "Hello" } }],
    next: "bmV4dA"
  }
})
const secrets = [Redacted.make(`whsec_${Buffer.alloc(32, 1).toString("base64")}`)]

const program = Effect.gen(function* () {
  const sender = yield* HttpWebhookSender.make({
    allowPrivateNetworks: true,
    timeoutMillis,
    trustedCertificates: [cert],
    ...(maxSockets === undefined ? {} : { maxSockets })
  })
  const deadline = performance.now() + durationMillis
  const results = targets.map(() => ({ answered: 0, notAnswered: 0, durations: [] }))
  const loop = (target, result, index) =>
    Effect.gen(function* () {
      let n = 0
      while (performance.now() < deadline) {
        const outcome = yield* sender.send({
          url: target.url,
          eventId: `evt_${index}_${n++}`,
          body,
          secrets,
          timeoutMillis: target.timeoutMillis ?? timeoutMillis
        })
        if (outcome._tag === "Answered" && outcome.status < 300) result.answered++
        else result.notAnswered++
        result.durations.push(outcome.durationMillis)
      }
    })
  const started = performance.now()
  yield* Effect.forEach(
    targets.flatMap((target, t) =>
      Array.from({ length: target.loops }, (_, i) => loop(target, results[t], `${t}_${i}`))
    ),
    (effect) => effect,
    { concurrency: "unbounded" }
  ).pipe(Effect.timeoutOption(durationMillis)) // attempts to a hanging receiver still in flight are cut here
  const seconds = (performance.now() - started) / 1000
  return results.map(({ answered, notAnswered, durations }) => {
    durations.sort((a, b) => a - b)
    const at = (q) => durations[Math.min(durations.length - 1, Math.floor(q * durations.length))] ?? 0
    return { answered, notAnswered, perSecond: Math.round(answered / seconds), p50: at(0.5), p99: at(0.99) }
  })
})

const results = await Effect.runPromise(Effect.scoped(program))
process.stdout.write(`${JSON.stringify(results)}\n`)
