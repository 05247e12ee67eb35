// HTTP/1.1 replies read from the raw bytes a socket received, for the tests that speak HTTP on `node:net`.

/** One reply: its status, header fields (names in lower case) and body, de-chunked. */
export interface Response {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** The responses in `text`, in order; a last one cut short is left out. */
export const parse = (text: string): Array<Response> => {
  const responses: Array<Response> = []
  let rest = text
  for (;;) {
    const end = rest.indexOf("\r\n\r\n")
    if (end === -1) return responses
    const [statusLine = "", ...lines] = rest.slice(0, end).split("\r\n")
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(":")
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
    }
    const status = Number(statusLine.split(" ")[1])
    rest = rest.slice(end + 4)
    let content = ""
    if (headers["transfer-encoding"] === "chunked") {
      for (;;) {
        const lineEnd = rest.indexOf("\r\n")
        if (lineEnd === -1) return responses
        const size = Number.parseInt(rest.slice(0, lineEnd), 16)
        if (rest.length < lineEnd + 2 + size + 2) return responses
        content += rest.slice(lineEnd + 2, lineEnd + 2 + size)
        rest = rest.slice(lineEnd + 2 + size + 2)
        if (size === 0) break
      }
    } else if (status >= 200) {
      const length = Number(headers["content-length"] ?? 0)
      if (rest.length < length) return responses
      content = rest.slice(0, length)
      rest = rest.slice(length)
    }
    responses.push({ status, headers, body: content })
  }
}
