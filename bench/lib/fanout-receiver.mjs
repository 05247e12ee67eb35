// The receivers of `bench/webhook-fanout.mjs`, in a process of their own so that the appends cannot delay them:
// `/hook/N` answers 204 and prints, per submission an event carries, its number and the time it arrived;
// `/hang` never answers. Prints its port first.
import { createServer } from "node:http"

const server = createServer((request, response) => {
  if (request.url === "/hang") return
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    const at = Date.now()
    response.writeHead(204).end()
    const event = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    const lines = event.data.submissions.map(
      (submission) => `${submission.content.n} ${at} ${request.headers["webhook-id"]}`
    )
    process.stdout.write(`${lines.join("\n")}\n`)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`))
