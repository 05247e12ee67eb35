import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Metrics from "@effect/opentelemetry/Metrics"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as Resource from "@effect/opentelemetry/Resource"
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"
import type { CollectionResult, MetricProducer } from "@opentelemetry/sdk-metrics"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as Listener from "../Listener.js"
import * as Logging from "../Logging.js"
import type * as ServiceConfig from "../ServiceConfig.js"
import { CannotListen } from "../StartupFailure.js"
import * as ProcessMetrics from "./processMetrics.js"

const METRICS_PATH = "/metrics"

// The text format's media type with its version, which Prometheus and `promtool` expect; the exporter's own
// handler sends a bare `text/plain`.
const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const listen = (server: Server, address: { readonly host: string; readonly port: number }) =>
  Effect.acquireRelease(
    Effect.mapError(
      Listener.listen(server, address),
      (cause) => new CannotListen({ address: `METRICS_HOST=${address.host} METRICS_PORT=${address.port}`, cause })
    ),
    () =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        // A scraper holding a connection open must not hold the stop.
        server.closeAllConnections()
      })
  )

const urlHost = (host: string) => (host.includes(":") ? `[${host}]` : host)

// `@effect/opentelemetry` gives every metric the unit "1", which Prometheus shows as `# UNIT name 1`: the unit is
// the one the name ends in (seconds, bytes), and a count has none. Effect's own `effect_fiber_*` metrics are
// left out: they have no description, and the hot route runs without them (FileDataRoute), so they would count
// only some fibers.
const unitOf = (name: string): string => /_(seconds|bytes)(_total)?$/.exec(name)?.[1] ?? ""

const described = (collected: CollectionResult): CollectionResult => ({
  ...collected,
  resourceMetrics: {
    ...collected.resourceMetrics,
    scopeMetrics: collected.resourceMetrics.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics
        .filter((metric) => !metric.descriptor.name.startsWith("effect_fiber_"))
        .map((metric) => ({ ...metric, descriptor: { ...metric.descriptor, unit: unitOf(metric.descriptor.name) } }))
    }))
  }
})

// The exporter's request handler on a listener of ours, rather than the listener the exporter can start itself:
// that one reports a port it cannot take only to OpenTelemetry's diagnostics, after the start, and cannot say
// which port `0` picked.
const prometheus = (address: { readonly host: string; readonly port: number }) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const exporter = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true })
      const effectMetrics = yield* Metrics.makeProducer
      const processMetrics = yield* ProcessMetrics.make
      const producer: MetricProducer = {
        collect: (options) => {
          processMetrics.update()
          return effectMetrics.collect(options).then(described)
        }
      }
      yield* Metrics.registerProducer(producer, () => exporter)
      // The exporter's serializer as its options above configure it, behind a reply of ours.
      const serializer = new PrometheusSerializer(undefined, false, undefined, false, true)
      const server = createServer((request, response) => {
        if ((request.url ?? "").split("?", 1)[0] !== METRICS_PATH) {
          response.statusCode = 404
          return response.end()
        }
        exporter.collect().then(
          ({ resourceMetrics }) => {
            response.writeHead(200, { "content-type": METRICS_CONTENT_TYPE })
            response.end(serializer.serialize(resourceMetrics))
          },
          (cause: unknown) => {
            response.writeHead(500, { "content-type": METRICS_CONTENT_TYPE })
            response.end(`# failed to collect metrics: ${cause}\n`)
          }
        )
      })
      yield* listen(server, address)
      const { port } = server.address() as AddressInfo
      // Followed by a space, as the listening line: found with `metrics on (http://\S+)`.
      yield* Logging.announce(`metrics on http://${urlHost(address.host)}:${port}${METRICS_PATH} (Prometheus text)`)
    })
  )

// `@effect/opentelemetry`'s tracer also makes each span the active OpenTelemetry context around every step a
// fiber in a span evaluates, for libraries instrumented through the OpenTelemetry API. Nothing here is, and
// measured on the small bench profile that context was the largest single cost of tracing
// (docs/performance.md#request-metrics-and-spans): this tracer makes the same spans without it.
const tracerWithoutOtelContext = Layer.unwrapEffect(
  Effect.map(OtelTracer.make, (tracer) =>
    Layer.setTracer(
      Tracer.make({
        span: (name, parent, context, links, startTime, kind, options) =>
          tracer.span(name, parent, context, links, startTime, kind, options),
        context: (execution) => execution()
      })
    )
  )
)

const traces = ({ protocol, url }: ServiceConfig.TraceExport) =>
  tracerWithoutOtelContext.pipe(
    Layer.provide(OtelTracer.layerTracer),
    Layer.provide(
      NodeSdk.layerTracerProvider(
        new BatchSpanProcessor(
          protocol === "http/json" ? new JsonTraceExporter({ url }) : new ProtobufTraceExporter({ url })
        )
      )
    )
  )

/**
 * The span export (batched, OTLP/HTTP in the configured encoding) and the Prometheus listener a configuration
 * asks for, from `@effect/opentelemetry`'s parts, on one resource.
 *
 * @internal
 */
export const layer = (options: ServiceConfig.TelemetryOptions): Layer.Layer<never, CannotListen> =>
  Layer.mergeAll(
    Option.match(options.traces, { onNone: () => Layer.empty, onSome: traces }),
    Option.match(options.metrics, { onNone: () => Layer.empty, onSome: prometheus })
  ).pipe(
    Layer.provide(
      Resource.layer({ serviceName: options.resource.serviceName, attributes: options.resource.attributes })
    )
  )
