/** An OpenTelemetry SDK in memory, for tests: the spans ended, and the metrics as collected now. */
import { AggregationTemporality, MetricReader, MeterProvider, type DataPoint } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

class CollectOnDemand extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

export function inMemoryTelemetry() {
  const spans = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer("test");
  const reader = new CollectOnDemand();
  const meter = new MeterProvider({ readers: [reader] }).getMeter("test");
  return {
    tracer,
    meter,
    /** Each ended span: its name and attributes, in the order they ended. */
    spans: () => spans.getFinishedSpans().map((span) => ({ name: span.name, attributes: span.attributes, span })),
    /** Each instrument's data points, by name, with their unit. */
    async metrics() {
      const { resourceMetrics } = await reader.collect();
      const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
      return Object.fromEntries(
        all.map((metric) => [
          metric.descriptor.name,
          { unit: metric.descriptor.unit, points: metric.dataPoints as DataPoint<unknown>[] },
        ]),
      );
    },
  };
}
