// The receivers of `bench/webhooks.mjs`, in a process of their own: on 127.0.0.1, over http and https (the
// certificate given in argv), `/fast` answers 204 as soon as the body is read, `/hang` never answers. Prints
// `{"http":PORT,"https":PORT}` once both listen.
import { readFileSync } from "node:fs"
import * as http from "node:http"
import * as https from "node:https"

const [keyPath, certPath] = process.argv.slice(2)
const handler = (request, response) => {
  request.resume()
  request.on("end", () => {
    if (request.url === "/fast") response.writeHead(204).end()
  })
}
const listen = (server) => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)))
const plain = http.createServer({ keepAliveTimeout: 60_000 }, handler)
const secure = https.createServer(
  { key: readFileSync(keyPath), cert: readFileSync(certPath), keepAliveTimeout: 60_000 },
  handler
)
const ports = { http: await listen(plain), https: await listen(secure) }
process.stdout.write(`${JSON.stringify(ports)}\n`)
