// The small profile's load: autocannon on `POST /api/v1/file-data`, bodies cycling over every (file, key) pair.

import autocannon from "autocannon"
import { percentile } from "./stats.mjs"

// One body per file of the small dataset, each with its owner's key.
export const bodiesOf = ({ files, users }) =>
  Array.from({ length: files }, (_, f) => JSON.stringify({ fileId: `file-${f}`, apiKey: `bench-key-${f % users}` }))

// autocannon's own percentiles come from a histogram of whole milliseconds: at the small profile's 2 to 3 ms, a
// p99 ratio read from them moves in steps of a third or a half. Each response's time is kept as measured (in
// fractional milliseconds) and the percentiles taken from those instead (`latencyMs`).

export const load = (url, bodies, { seconds, connections }) =>
  new Promise((resolve, reject) => {
    let i = 0
    let times = new Float64Array(1 << 16)
    let count = 0
    const instance = autocannon(
      {
        url: `${url}/api/v1/file-data`,
        connections,
        duration: seconds,
        requests: [
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            setupRequest: (request) => ({ ...request, body: bodies[i++ % bodies.length] })
          }
        ]
      },
      (error, result) => {
        if (error) return reject(error)
        const sorted = times.subarray(0, count).sort()
        resolve({ ...result, latencyMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99) } })
      }
    )
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode > 299) return
      if (count === times.length) {
        const grown = new Float64Array(times.length * 2)
        grown.set(times)
        times = grown
      }
      times[count++] = responseTime
    })
  })
