// `node bench/wakeups.mjs`: how soon the built server hears of another process's commit (issue #42 item 5). Another
// process appends one submission at a time (bench/lib/wakeup-appender.mjs: the CLI's append, or another
// instance's, on the same database); measured from its commit: a waiting incremental read (`wait: 30`) answered
// with it (target: p99 <= 250 ms), and a webhook's first attempt arriving at a receiver on 127.0.0.1 (target:
// p99 <= 500 ms); then it erases that submission, and a waiting change-feed request is answered with the erasure
// (target: p99 <= 250 ms, from its commit on PostgreSQL, from its call on SQLite, where the call returns only
// after the checkpoint that follows the commit). On SQLite, and on PostgreSQL when BENCH_DATABASE_URL or TEST_DATABASE_URL is set (a fresh
// database, dropped after). Exits non-zero when a target is missed. `pnpm bench` takes the same rows (profiles
// wakeups and wakeups-pg). Options: --samples 100  --engines sqlite,postgres
import { commandLine } from "./lib/options.mjs"
import { build } from "./lib/processes.mjs"
import { wakeupRows } from "./lib/wakeups.mjs"

const option = commandLine(import.meta.url, ["samples", "engines"])
const databaseUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || undefined
const samples = Number(option("samples", "100"))
const engines = option("engines", databaseUrl ? "sqlite,postgres" : "sqlite").split(",")

build()
const missed = []
for (const engine of engines) {
  const { rows, targets } = await wakeupRows(engine, { samples, databaseUrl })
  console.table(rows)
  for (const target of targets) {
    console.log(`${target.met ? "met" : "MISSED"}: ${target.name}: ${target.measured} (${target.bound})`)
    if (!target.met) missed.push(target.name)
  }
}
process.exit(missed.length === 0 ? 0 : 1)
