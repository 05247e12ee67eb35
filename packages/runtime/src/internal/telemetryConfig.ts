/**
 * The telemetry section of the configuration: `METRICS_*` and the standard `OTEL_*` variables this service
 * reads itself; the OpenTelemetry SDK reads the others on its own.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { flag, hostName, oneOf, optional, quoted, redactUrl } from "./configVariables.js"

/** @internal */
export interface TraceExport {
  /** `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, or `v1/traces` under `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  /** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` or `OTEL_EXPORTER_OTLP_PROTOCOL`; `http/protobuf` when neither is set. */
  readonly protocol: "http/protobuf" | "http/json"
}

/** @internal */
export interface TelemetryOptions {
  /** `METRICS_HOST` and `METRICS_PORT`; none when `METRICS_PORT` is unset: no metrics listener. */
  readonly metrics: Option.Option<{ readonly host: string; readonly port: number }>
  /** None unless an OTLP endpoint is set (and `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER=none` do not say otherwise). */
  readonly traces: Option.Option<TraceExport>
  /** `OTEL_SERVICE_NAME` (default `filedata`) and `OTEL_RESOURCE_ATTRIBUTES`. */
  readonly resource: { readonly serviceName: string; readonly attributes: Readonly<Record<string, string>> }
}

const metricsPort = optional("METRICS_PORT", (text) => {
  const value = Number(text)
  return /^\d+$/.test(text.trim()) && value <= 65535
    ? Either.right(value)
    : Either.left(`Expected a whole number from 0 to 65535 but received ${quoted(text)}`)
})

// The exporter would take any text and only warn, once, that it cannot send: spans would be lost unnoticed.
const httpUrl = (text: string): Either.Either<string, string> =>
  /^https?:\/\//i.test(text.trim()) && URL.canParse(text.trim())
    ? Either.right(text.trim())
    : Either.left(`Expected an http:// or https:// URL but received ${quoted(redactUrl(text))}`)

// Whatever its case, as the OpenTelemetry specification reads its enumerations.
const otlpProtocol = (name: string) =>
  optional(name, (text) => {
    const value = text.trim().toLowerCase()
    return value === "http/protobuf" || value === "http/json"
      ? Either.right(value as TraceExport["protocol"])
      : Either.left(`Expected http/protobuf or http/json (grpc is not supported) but received ${quoted(text)}`)
  })

// OTEL_RESOURCE_ATTRIBUTES: `key=value` pairs separated by commas, values percent-encoded (W3C Baggage's
// format, as the OpenTelemetry specification says).
const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

const resourceAttributes = optional("OTEL_RESOURCE_ATTRIBUTES", (text) => {
  const attributes: Record<string, string> = {}
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue
    const equals = pair.indexOf("=")
    const key = pair.slice(0, Math.max(0, equals)).trim()
    const value = decoded(pair.slice(equals + 1).trim())
    if (key === "" || value === undefined) {
      return Either.left(`Expected key=value pairs, values percent-encoded, but received ${quoted(text)}`)
    }
    attributes[key] = value
  }
  return Either.right(attributes)
})

/** @internal */
export const telemetry: Config.Config<TelemetryOptions> = Config.all({
  metricsPort,
  metricsHost: hostName("METRICS_HOST", "127.0.0.1"),
  endpoint: optional("OTEL_EXPORTER_OTLP_ENDPOINT", httpUrl),
  tracesEndpoint: optional("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", httpUrl),
  protocol: otlpProtocol("OTEL_EXPORTER_OTLP_PROTOCOL"),
  tracesProtocol: otlpProtocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
  exporter: oneOf("OTEL_TRACES_EXPORTER", ["otlp", "none"]).pipe(Config.withDefault("otlp")),
  disabled: flag("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  serviceName: optional("OTEL_SERVICE_NAME", (text) => Either.right(text.trim())),
  attributes: resourceAttributes
}).pipe(
  Config.map((read): TelemetryOptions => {
    const attributes = Option.getOrElse(read.attributes, (): Record<string, string> => ({}))
    // A signal's own endpoint is taken as it is; the general one gets the signal's path appended.
    const url = Option.orElse(read.tracesEndpoint, () =>
      Option.map(read.endpoint, (endpoint) => `${endpoint.endsWith("/") ? endpoint : `${endpoint}/`}v1/traces`)
    )
    return {
      metrics: Option.map(read.metricsPort, (port) => ({ host: read.metricsHost, port })),
      traces:
        read.disabled || read.exporter === "none"
          ? Option.none()
          : Option.map(url, (url) => ({
              url,
              protocol: Option.getOrElse(
                Option.orElse(read.tracesProtocol, () => read.protocol),
                () => "http/protobuf"
              )
            })),
      resource: {
        // OTEL_SERVICE_NAME wins over a `service.name` in the attributes, as the specification says.
        serviceName: Option.getOrElse(read.serviceName, () => attributes["service.name"] ?? "filedata"),
        attributes
      }
    }
  })
)
