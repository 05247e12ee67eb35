import type { WebhookSender } from "@filedata/core"

/** What a Node error of a request says about the attempt, in words safe to log: its code, never its message. */
export const classify = (error: unknown): { readonly failure: WebhookSender.FailureClass; readonly detail: string } => {
  const raw = (error as { code?: unknown } | null)?.code
  const code = typeof raw === "string" && /^[A-Z0-9_]{1,64}$/.test(raw) ? raw : undefined
  if (code === undefined) return { failure: "connection", detail: "the connection failed" }
  if (dns.has(code)) return { failure: "dns", detail: `the host does not resolve (${code})` }
  if (/CERT|SSL|TLS|SIGNATURE|ALTNAME/.test(code) || code === "EPROTO") {
    return { failure: "tls", detail: `the TLS handshake failed (${code})` }
  }
  if (code.startsWith("HPE_")) return { failure: "connection", detail: `the answer is not valid HTTP (${code})` }
  return { failure: "connection", detail: `${connection[code] ?? "the connection failed"} (${code})` }
}

const dns = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME", "EAI_NODATA", "ENODATA", "ESERVFAIL"])

const connection: Readonly<Record<string, string>> = {
  ECONNREFUSED: "the connection was refused",
  ECONNRESET: "the connection was closed before an answer",
  EPIPE: "the connection was closed while sending",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  ETIMEDOUT: "the connection timed out"
}
