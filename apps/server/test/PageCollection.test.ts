import { constants, PerformanceObserver } from "node:perf_hooks"
import { describe, expect, it, vi } from "@effect/vitest"
import * as PageCollection from "../src/fast/internal/pageCollection.js"

// The young collections the runtime reports while `run` runs.
const youngCollections = async (run: () => void): Promise<number> => {
  let seen = 0
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) seen++
    }
  })
  observer.observe({ entryTypes: ["gc"] })
  run()
  // Entries reach the observer on a later turn of the event loop.
  await new Promise((resolve) => setTimeout(resolve, 50))
  observer.disconnect()
  return seen
}

describe("PageCollection.count", () => {
  it("collects nothing until the server turns it on", async () => {
    // A module of its own: the files of a worker share one, which an in-process server may have turned on.
    vi.resetModules()
    const fresh: typeof PageCollection = await import("../src/fast/internal/pageCollection.js")
    const page = Buffer.alloc(fresh.intervalBytes)
    expect([fresh.count(page), fresh.count(page)]).toEqual([false, false])
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe("undefined")
  })

  it("collects the young generation once per interval of Buffer pages written, never for strings", async () => {
    PageCollection.enable()
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe("undefined")
    const quarter = PageCollection.intervalBytes / 4
    const text = "x".repeat(quarter)
    expect(Array.from({ length: 16 }, () => PageCollection.count(text)).some(Boolean)).toBe(false)
    const page = Buffer.alloc(quarter)
    const collected: Array<boolean> = []
    const seen = await youngCollections(() => {
      for (let i = 0; i < 8; i++) collected.push(PageCollection.count(page))
    })
    // Whatever this process counted before, eight quarters cross the interval once or twice, four pages apart.
    const at = collected.flatMap((done, i) => (done ? [i] : []))
    expect(at.length).toBeGreaterThanOrEqual(1)
    if (at.length === 2) expect((at[1] as number) - (at[0] as number)).toBe(4)
    expect(seen).toBeGreaterThanOrEqual(at.length)
  })
})
