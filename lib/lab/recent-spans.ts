/**
 * The lab's memory of finished spans, for the waterfall beside a picked lane: a span processor that keeps the
 * last `capacity` spans this process ended (a span still running is not there: only what ended is drawn), and
 * finds an operation's by its id. The lab's switch runs in a span carrying `operation.id` (promote.ts), as the
 * provider calls' spans do: an operation's spans are those spans, everything under them, and the spans above
 * them (the route's).
 */
import { SpanStatusCode, type Attributes, type HrTime } from "@opentelemetry/api";
import {
  ParentBasedSampler,
  SamplingDecision,
  type ReadableSpan,
  type Sampler,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { Problem } from "../core/problems";
import { processSingleton } from "../core/process-singleton";
import { liveLane } from "./live-lanes";

export interface SpanView {
  spanId: string;
  name: string;
  /** From the first span shown. */
  startMs: number;
  durationMs: number;
  /** The parent's `spanId` when it is shown, else null. */
  parent: string | null;
  /** Whether the span ended in error (its status). */
  failed: boolean;
  attributes: Attributes;
}

const milliseconds = ([seconds, nanos]: HrTime): number => seconds * 1_000 + nanos / 1_000_000;
const keyOf = (traceId: string, spanId: string | undefined) => `${traceId}/${spanId ?? ""}`;
const ownKey = (span: ReadableSpan) => keyOf(span.spanContext().traceId, span.spanContext().spanId);
const parentKey = (span: ReadableSpan) =>
  span.parentSpanContext ? keyOf(span.spanContext().traceId, span.parentSpanContext.spanId) : null;

export class RecentSpans implements SpanProcessor {
  private readonly ended: ReadableSpan[] = [];
  /** Started and not ended yet: an answered switch's own span, and its route's, end just after its answer. */
  private readonly open = new Set<ReadableSpan>();
  private readonly waiting = new Set<() => void>();

  constructor(readonly capacity: number) {}

  onStart(span: ReadableSpan): void {
    this.open.add(span);
    // A span that some code never ends is let go, oldest first, rather than kept for the life of the process.
    if (this.open.size > 10 * this.capacity) this.open.delete(this.open.values().next().value!);
  }

  onEnd(span: ReadableSpan): void {
    this.open.delete(span);
    this.ended.push(span);
    if (this.ended.length > this.capacity) this.ended.shift();
    for (const check of this.waiting) check();
  }

  /** Whether a span of a trace the operation ran in has started and not ended. */
  private running(operationId: string): boolean {
    const traces = new Set(
      [...this.open, ...this.ended]
        .filter((span) => span.attributes["operation.id"] === operationId)
        .map((span) => span.spanContext().traceId),
    );
    return [...this.open].some((span) => traces.has(span.spanContext().traceId));
  }

  /** Resolves once no span of the operation's traces is running, or after `withinMs`, whichever comes first. */
  settled(operationId: string, withinMs: number): Promise<void> {
    if (!this.running(operationId)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(check);
        resolve();
      };
      const check = () => {
        if (!this.running(operationId)) done();
      };
      const timer = setTimeout(done, withinMs);
      this.waiting.add(check);
    });
  }

  forceFlush = (): Promise<void> => Promise.resolve();
  shutdown = (): Promise<void> => Promise.resolve();

  /** The operation's spans, each before the ones under it; an empty list when none of them is remembered. */
  ofOperation(operationId: string): SpanView[] {
    const marked = new Set(this.ended.filter((span) => span.attributes["operation.id"] === operationId).map(ownKey));
    const byKey = new Map(this.ended.map((span) => [ownKey(span), span]));
    const ancestors = (span: ReadableSpan): string[] => {
      const parent = parentKey(span);
      const above = parent === null ? undefined : byKey.get(parent);
      return above ? [parent!, ...ancestors(above)] : [];
    };
    // A span of the operation's: marked, or under a marked one; the ones above a marked span frame it.
    const shown = new Set<string>();
    for (const span of this.ended) {
      const key = ownKey(span);
      const line = ancestors(span);
      if (marked.has(key) || line.some((above) => marked.has(above))) shown.add(key);
      if (marked.has(key)) for (const above of line) shown.add(above);
    }
    return inTreeOrder(this.ended.filter((span) => shown.has(ownKey(span))).map((span) => viewOf(span, shown)));
  }
}

/** A span as the endpoint answers it, timed from the epoch until `inTreeOrder` sets the origin. */
function viewOf(span: ReadableSpan, shown: Set<string>): SpanView {
  const parent = parentKey(span);
  return {
    spanId: span.spanContext().spanId,
    name: span.name,
    startMs: milliseconds(span.startTime),
    durationMs: milliseconds(span.duration),
    parent: parent !== null && shown.has(parent) ? span.parentSpanContext!.spanId : null,
    failed: span.status.code === SpanStatusCode.ERROR,
    attributes: span.attributes,
  };
}

/**
 * Each span before the ones under it, siblings by start (then by end, as they arrived): a span's start is taken
 * from the wall clock to the millisecond, so a parent and its first child often start in the same one.
 */
function inTreeOrder(views: SpanView[]): SpanView[] {
  const origin = Math.min(...views.map((view) => view.startMs));
  const children = new Map<string | null, SpanView[]>();
  for (const view of views) children.set(view.parent, [...(children.get(view.parent) ?? []), view]);
  const ordered: SpanView[] = [];
  const visit = (parent: string | null) => {
    for (const view of (children.get(parent) ?? []).sort((a, b) => a.startMs - b.startMs)) {
      ordered.push({ ...view, startMs: view.startMs - origin });
      visit(view.spanId);
    }
  };
  visit(null);
  return ordered;
}

/**
 * What is recorded when the lab's memory is the only taker of spans (no OTLP export): every span but a request
 * that reads (GET, HEAD) and what runs under it. No switch runs under a read, so no waterfall loses a span; and a
 * page's reads (two spans of Next.js's each, every tab reading again after every answer) neither cost a span
 * each nor push the switches' spans out of the last 500.
 */
export const labSampler = (): Sampler => new ParentBasedSampler({ root: readsLeftOut });

const readMethods = new Set(["GET", "HEAD"]);
const readsLeftOut: Sampler = {
  shouldSample: (_context, _traceId, _name, _kind, attributes) => ({
    decision: readMethods.has(String(attributes["http.method"]))
      ? SamplingDecision.NOT_RECORD
      : SamplingDecision.RECORD_AND_SAMPLED,
  }),
  toString: () => "ReadsLeftOut",
};

/** This process's one store (instrumentation.ts registers it; the route reads it: two bundles, one store). */
export const labSpans = (): RecentSpans => processSingleton("LabSpans", () => new RecentSpans(500));

export class SpansNotFound extends Problem {
  constructor(operationId: string, capacity: number) {
    super(
      404,
      "spans-not-found",
      "No spans recorded for this operation",
      `This app instance remembers no finished span of operation ${operationId}: it keeps its last ${capacity}, ` +
        "and another instance's operations are not among them.",
    );
  }
}

/** How long a read of an answered operation's spans waits for its last ones (its switch's, its route's) to end. */
const answeredSpansWaitMs = 2_000;

/**
 * The operation's finished spans on this instance; a 404 when there are none. Once it has answered (it no longer
 * runs here), after its last spans have ended: the page reads them as the answer comes, and a read that came
 * before its switch's span and its route's ended would be all it ever showed of them.
 */
export async function operationSpans(operationId: string): Promise<SpanView[]> {
  const store = labSpans();
  if (!liveLane(operationId)) await store.settled(operationId, answeredSpansWaitMs);
  const spans = store.ofOperation(operationId);
  if (spans.length === 0) throw new SpansNotFound(operationId, store.capacity);
  return spans;
}
