import { context, SpanStatusCode, trace, type Attributes } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it, vi } from "vitest";
import { labSampler, RecentSpans } from "./recent-spans";

/** A finished span as the SDK hands it to a processor: only the fields the store reads. */
function ended(
  name: string,
  {
    trace = "t1",
    id,
    parent,
    startMs,
    durationMs,
    attributes = {},
    failed = false,
  }: {
    trace?: string;
    id: string;
    parent?: string;
    startMs: number;
    durationMs: number;
    attributes?: Attributes;
    failed?: boolean;
  },
): ReadableSpan {
  const hr = (ms: number): [number, number] => [Math.floor(ms / 1_000), (ms % 1_000) * 1_000_000];
  return {
    name,
    spanContext: () => ({ traceId: trace, spanId: id, traceFlags: 1 }),
    parentSpanContext: parent === undefined ? undefined : { traceId: trace, spanId: parent, traceFlags: 1 },
    startTime: hr(1_000_000 + startMs),
    duration: hr(durationMs),
    status: { code: failed ? SpanStatusCode.ERROR : SpanStatusCode.UNSET },
    attributes,
  } as unknown as ReadableSpan;
}

/** A burst: one route, two switches in it, each with its acquisition; children end (arrive) before parents. */
function burst(store: RecentSpans) {
  store.onEnd(ended("lease.acquire", { id: "a1", parent: "s1", startMs: 5, durationMs: 2 }));
  store.onEnd(
    ended("switch", { id: "s1", parent: "r", startMs: 5, durationMs: 10, attributes: { "operation.id": "op1" } }),
  );
  const refused = { id: "a2", parent: "s2", startMs: 6, durationMs: 1, failed: true };
  store.onEnd(ended("lease.acquire", refused));
  store.onEnd(
    ended("switch", { id: "s2", parent: "r", startMs: 6, durationMs: 2, attributes: { "operation.id": "op2" } }),
  );
  store.onEnd(ended("POST /api/lab/burst", { id: "r", startMs: 0, durationMs: 20 }));
}

describe("RecentSpans", () => {
  it("gives one operation its own spans and the route above them, each before the ones under it, timed from the first", () => {
    const store = new RecentSpans(100);
    burst(store);
    const op1 = store.ofOperation("op1");
    expect(op1.map((span) => [span.name, span.spanId, span.parent, span.startMs])).toEqual([
      ["POST /api/lab/burst", "r", null, 0],
      // Started in the same millisecond as its acquisition, the switch still comes first: it is the parent.
      ["switch", "s1", "r", 5],
      ["lease.acquire", "a1", "s1", 5],
    ]);
    expect(store.ofOperation("op2").map((span) => [span.spanId, span.failed])).toEqual([
      ["r", false],
      ["s2", false],
      ["a2", true],
    ]);
    expect(store.ofOperation("op3")).toEqual([]);
  });

  it("keeps only the last `capacity` spans: a parent forgotten leaves its children unframed", () => {
    const store = new RecentSpans(3);
    burst(store);
    // a1 and s1 are gone; s2's route is kept, op1 has nothing left.
    expect(store.ofOperation("op1")).toEqual([]);
    const op2 = store.ofOperation("op2");
    expect(op2.map((span) => span.spanId)).toEqual(["r", "s2", "a2"]);
    expect(op2[0]!.startMs).toBe(0);
    expect(op2[1]!.durationMs).toBe(2);
  });
});

describe("RecentSpans.settled", () => {
  it("waits until every started span of the operation's trace has ended: its switch's, then its route's", async () => {
    const store = new RecentSpans(100);
    const route = ended("POST /api/users/[userId]/primary", { id: "r", startMs: 0, durationMs: 20 });
    const switchSpan = ended("switch", {
      id: "s",
      parent: "r",
      startMs: 1,
      durationMs: 15,
      attributes: { "operation.id": "op1" },
    });
    const other = ended("POST /api/lab/reset", { trace: "t2", id: "x", startMs: 0, durationMs: 5 });
    for (const span of [route, switchSpan, other]) store.onStart(span);
    let settled = false;
    const waiting = store.settled("op1", 60_000).then(() => (settled = true));
    store.onEnd(switchSpan);
    await Promise.resolve();
    expect(settled).toBe(false);
    store.onEnd(route);
    // Answered with the other trace's span still running: only the operation's traces are waited for.
    await waiting;
    expect(store.ofOperation("op1").map((span) => span.name)).toEqual(["POST /api/users/[userId]/primary", "switch"]);
  });

  it("answers at once when nothing of the operation runs, and after its limit when something never ends", async () => {
    const store = new RecentSpans(100);
    await store.settled("unknown", 60_000);
    const forever = ended("switch", { id: "s", startMs: 0, durationMs: 1, attributes: { "operation.id": "op1" } });
    store.onStart(forever);
    vi.useFakeTimers();
    try {
      let settled = false;
      const waiting = store.settled("op1", 50).then(() => (settled = true));
      await vi.advanceTimersByTimeAsync(49);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await waiting;
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("labSampler", () => {
  it("records every span but a read's (GET, HEAD) and what runs under it", () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({
      sampler: labSampler(),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    }).getTracer("test");
    const request = (name: string, attributes: Attributes) => {
      const root = tracer.startSpan(name, { attributes });
      tracer.startSpan(`under ${name}`, {}, trace.setSpan(context.active(), root)).end();
      root.end();
    };
    request("GET", { "http.method": "GET" });
    request("HEAD", { "http.method": "HEAD" });
    request("POST", { "http.method": "POST" });
    request("PUT", { "http.method": "PUT" });
    request("reconcile", {});
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual([
      "under POST",
      "POST",
      "under PUT",
      "PUT",
      "under reconcile",
      "reconcile",
    ]);
  });
});
