// The small profile's load: autocannon on `POST /api/v1/file-data`, bodies cycling over every (file, key) pair.

import autocannon from "autocannon"

// One body per file of the small dataset, each with its owner's key.
export const bodiesOf = ({ files, users }) =>
  Array.from({ length: files }, (_, f) => JSON.stringify({ fileId: `file-${f}`, apiKey: `bench-key-${f % users}` }))

export const load = (url, bodies, { seconds, connections }) =>
  new Promise((resolve, reject) => {
    let i = 0
    autocannon(
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
      (error, result) => (error ? reject(error) : resolve(result))
    )
  })
