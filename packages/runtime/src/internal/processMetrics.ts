import { readdirSync } from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type * as MetricLabel from "effect/MetricLabel"
import type * as Scope from "effect/Scope"

// The names and meanings of prom-client's default metrics, which dashboards for Node.js services expect, but for
// the active resources: prom-client's `_total` on a gauge is a counter's suffix (docs/operations.md#metrics).
const gauge = (name: string, description: string) => Metric.gauge(name, { description })
const counter = (name: string, description: string) => Metric.counter(name, { description, incremental: true })

const cpuUser = counter("process_cpu_user_seconds_total", "User CPU time spent, in seconds")
const cpuSystem = counter("process_cpu_system_seconds_total", "System CPU time spent, in seconds")
const cpuTotal = counter("process_cpu_seconds_total", "User and system CPU time spent, in seconds")
const startTime = gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds")
const residentMemory = gauge("process_resident_memory_bytes", "Resident memory size, in bytes")
const openFds = gauge("process_open_fds", "Open file descriptors")
const heapUsed = gauge("nodejs_heap_size_used_bytes", "V8 heap in use, in bytes")
const heapTotal = gauge("nodejs_heap_size_total_bytes", "V8 heap allocated, in bytes")
const externalMemory = gauge(
  "nodejs_external_memory_bytes",
  "Memory of C++ objects bound to JavaScript objects, in bytes"
)
const activeResources = gauge(
  "nodejs_active_resources",
  "Handles and requests keeping the event loop alive (sockets, timers, file operations)"
)
const lag = (statistic: string) =>
  gauge(
    `nodejs_eventloop_lag_${statistic}_seconds`,
    `Event loop delay since the previous scrape, ${statistic}, in seconds`
  )
const lagMin = lag("min")
const lagMax = lag("max")
const lagMean = lag("mean")
const lagP50 = lag("p50")
const lagP90 = lag("p90")
const lagP99 = lag("p99")

const none: ReadonlyArray<MetricLabel.MetricLabel> = []

const fileDescriptors = (): number | undefined => {
  try {
    // The directory listing holds the descriptor that reads it.
    return readdirSync("/proc/self/fd").length - 1
  } catch {
    return undefined
  }
}

/**
 * The process's figures as Effect metrics, read from Node when `update` is called (at each scrape), with the
 * event loop's delay sampled meanwhile; the sampling stops with the scope.
 *
 * @internal
 */
export const make: Effect.Effect<{ readonly update: () => void }, never, Scope.Scope> = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => {
      const delay = monitorEventLoopDelay({ resolution: 10 })
      delay.enable()
      return delay
    }),
    (delay) => Effect.sync(() => delay.disable())
  ),
  (delay) => {
    let cpu = { user: 0, system: 0 }
    startTime.unsafeUpdate(performance.timeOrigin / 1000, none)
    // The lag's series from the start, at 0 until the monitor has a sample: a scrape right after the start
    // would otherwise miss them.
    for (const gauge of [lagMin, lagMax, lagMean, lagP50, lagP90, lagP99]) gauge.unsafeValue(none)
    return {
      update: () => {
        const now = process.cpuUsage()
        const user = (now.user - cpu.user) / 1e6
        const system = (now.system - cpu.system) / 1e6
        cpu = now
        cpuUser.unsafeUpdate(user, none)
        cpuSystem.unsafeUpdate(system, none)
        cpuTotal.unsafeUpdate(user + system, none)
        const memory = process.memoryUsage()
        residentMemory.unsafeUpdate(memory.rss, none)
        heapUsed.unsafeUpdate(memory.heapUsed, none)
        heapTotal.unsafeUpdate(memory.heapTotal, none)
        externalMemory.unsafeUpdate(memory.external, none)
        activeResources.unsafeUpdate(process.getActiveResourcesInfo().length, none)
        const fds = fileDescriptors()
        if (fds !== undefined) openFds.unsafeUpdate(fds, none)
        if (delay.count > 0) {
          lagMin.unsafeUpdate(delay.min / 1e9, none)
          lagMax.unsafeUpdate(delay.max / 1e9, none)
          lagMean.unsafeUpdate(delay.mean / 1e9, none)
          lagP50.unsafeUpdate(delay.percentile(50) / 1e9, none)
          lagP90.unsafeUpdate(delay.percentile(90) / 1e9, none)
          lagP99.unsafeUpdate(delay.percentile(99) / 1e9, none)
          delay.reset()
        }
      }
    }
  }
)
