/**
 * The tracer provider, for whoever sets one up (the OTLP export, or the lab alone without it): its span
 * processors, and the async context that makes one request's spans one trace (without it every span is a root).
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import { BasicTracerProvider, type Sampler, type SpanProcessor } from "@opentelemetry/sdk-trace-base";

/** `sampler`: which spans are recorded (the SDK's default records every one). */
export function registerTracing(
  spanProcessors: SpanProcessor[],
  { resource, sampler }: { resource?: Resource; sampler?: Sampler } = {},
): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ resource, spanProcessors, sampler }));
}
