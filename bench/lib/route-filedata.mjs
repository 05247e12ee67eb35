// filedata's side of `bench/route.mjs`: the hot route's listener as `pnpm start` makes it for the small profile
// (SQLite reader with its default page size, memory limiter with quotas out of the way, the service's logger at
// `LOG_LEVEL` (warn unless given), metrics and traces off), driven by `route-harness.mjs`. Bundled from the
// TypeScript sources by `bench/route.mjs`.

import { FileRepository, RateLimiter, SubmissionSignals, WaitingRequests } from "@filedata/core"
import { MemoryRateLimiter } from "@filedata/rate-limiter-memory"
import { Logging } from "@filedata/runtime"
import { SqliteFileRepository } from "@filedata/sqlite"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as FileDataRoute from "../../apps/server/src/fast/FileDataRoute.ts"
import { measure } from "./route-harness.mjs"

const [db, requests, runs, level = "warn"] = process.argv.slice(2)
const unlimited = { limit: 1_000_000_000, windowMillis: 60_000 }

const program = Effect.gen(function* () {
  const files = yield* SqliteFileRepository.make({ filename: db, pageSize: SqliteFileRepository.defaultPageSize })
  const limiter = yield* MemoryRateLimiter.make({ apiKey: unlimited, clientAddress: unlimited })
  const listener = yield* FileDataRoute.make({ trustProxy: false }).pipe(
    Effect.provideService(FileRepository.FileRepository, files),
    Effect.provideService(RateLimiter.RateLimiter, limiter),
    // Only the incremental read waits: no poll is needed for this route's requests.
    Effect.provideService(SubmissionSignals.SubmissionSignals, { changed: () => Effect.succeed(false) }),
    Effect.provideServiceEffect(WaitingRequests.WaitingRequests, WaitingRequests.make())
  )
  yield* Effect.promise(() => measure(listener, Number(requests), Number(runs)))
})

const logLevel = LogLevel.fromLiteral({ debug: "Debug", info: "Info", warn: "Warning", error: "Error" }[level])
await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(Logging.layer(logLevel))))
