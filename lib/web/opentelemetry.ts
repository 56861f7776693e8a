/**
 * OpenTelemetry's SDK for the app, exporting traces and metrics over OTLP/HTTP. instrumentation.ts loads this
 * module only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set: without it nothing is exported, and with the lab off nothing
 * is registered (the spans and instruments of the lease, the provider client and Next.js stay the API's no-ops;
 * with the lab on, a tracer provider feeds only its memory of spans, tracing.ts). The exporters read the
 * endpoint (`/v1/traces`, `/v1/metrics` appended), headers and timeouts from the standard variables themselves.
 */
import { metrics } from "@opentelemetry/api";
import { getNumberFromEnv, getStringFromEnv } from "@opentelemetry/core";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtobufMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { registerTracing } from "./tracing";

const protocols = ["http/protobuf", "http/json"] as const;
type Protocol = (typeof protocols)[number];

/**
 * A signal's protocol: its own variable, else the general one, else the specification's default, http/protobuf.
 * Null for one this app does not carry (gRPC: only the HTTP exporters are installed), said at start: the app then
 * exports nothing rather than sending another way, and serves as it would without an endpoint.
 */
function protocolOf(signal: "TRACES" | "METRICS"): Protocol | null {
  const name = `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`;
  const value = getStringFromEnv(name) ?? getStringFromEnv("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf";
  if ((protocols as readonly string[]).includes(value)) return value as Protocol;
  console.error(
    `[app] ${name} or OTEL_EXPORTER_OTLP_PROTOCOL is "${value}": this app exports ${protocols.join(" or ")}. ` +
      "Nothing is exported.",
  );
  return null;
}

/**
 * Registers the tracer and meter providers; `spanProcessors` (the lab's memory of spans) beside the exporter's.
 * False when it registered nothing (a protocol it does not carry).
 */
export function registerOpenTelemetry(spanProcessors: SpanProcessor[] = []): boolean {
  const [tracesProtocol, metricsProtocol] = [protocolOf("TRACES"), protocolOf("METRICS")];
  if (!tracesProtocol || !metricsProtocol) return false;
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, say more than the default name.
  const resource = resourceFromAttributes({ "service.name": "lease-lock-lab" }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const traceExporter = tracesProtocol === "http/json" ? new JsonTraceExporter() : new ProtobufTraceExporter();
  const metricExporter = metricsProtocol === "http/json" ? new JsonMetricExporter() : new ProtobufMetricExporter();
  // The metric reader reads no variable: its two are read here (the batch processor reads OTEL_BSP_* itself).
  // The reader refuses a timeout longer than its interval: a short interval shortens the default timeout with it.
  const exportIntervalMillis = getNumberFromEnv("OTEL_METRIC_EXPORT_INTERVAL") ?? 60_000;
  const exportTimeoutMillis = getNumberFromEnv("OTEL_METRIC_EXPORT_TIMEOUT") ?? Math.min(30_000, exportIntervalMillis);
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis, exportTimeoutMillis }),
    ],
  });
  registerTracing([new BatchSpanProcessor(traceExporter), ...spanProcessors], { resource });
  metrics.setGlobalMeterProvider(meterProvider);
  return true;
}
