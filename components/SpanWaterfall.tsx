"use client";

import { useQuery } from "@tanstack/react-query";
import type { SpanView } from "./api";
import { spansQuery } from "./queries";

/** A span's name in the lesson's words: a checkpoint says which step it let through. */
function labelOf(span: SpanView): string {
  const step = span.attributes["lease.step"];
  if (span.name === "lease.checkpoint" && typeof step === "string") return `checkpoint before ${step}`;
  return span.name;
}

/** How it went, as the span says: the lease's outcome, the provider's, or the HTTP status. */
function outcomeOf(span: SpanView): string {
  const { attributes } = span;
  const said = attributes["lease.outcome"] ?? attributes["provider.outcome"] ?? attributes["http.status_code"];
  return said === undefined ? (span.failed ? "error" : "") : String(said);
}

/** How deep each span sits under the ones shown, for the indent. */
function depths(spans: SpanView[]): Map<string, number> {
  const parents = new Map(spans.map((span) => [span.spanId, span.parent]));
  const depthOf = (spanId: string | null): number => {
    const parent = spanId === null ? null : (parents.get(spanId) ?? null);
    return parent === null ? 0 : 1 + depthOf(parent);
  };
  return new Map(spans.map((span) => [span.spanId, depthOf(span.spanId)]));
}

const ms = (value: number) => value.toFixed(1);

/**
 * The picked operation's spans as a waterfall: one row per span that ended (this instance's memory of them),
 * a bar from its start to its end on the trace's scale, and its times and outcome in words. A table, so that
 * the bars are also read as numbers.
 */
export function SpanWaterfall({ operationId, answeredAt }: { operationId: string; answeredAt: string | null }) {
  const spans = useQuery(spansQuery(operationId, answeredAt));
  const shortId = operationId.slice(0, 8);
  return (
    <section className="waterfall" aria-labelledby="waterfall-heading">
      <h3 id="waterfall-heading">Spans of operation {shortId}</h3>
      {spans.isPending ? (
        <p>Reading the spans…</p>
      ) : spans.error ? (
        <p role="alert">{spans.error.message}</p>
      ) : spans.data === null || spans.data.length === 0 ? (
        <p>No spans recorded for this operation (on the app instance that answered).</p>
      ) : (
        <SpanTable spans={spans.data} shortId={shortId} />
      )}
    </section>
  );
}

function SpanTable({ spans, shortId }: { spans: SpanView[]; shortId: string }) {
  const total = Math.max(...spans.map((span) => span.startMs + span.durationMs), 1);
  const depth = depths(spans);
  return (
    <table className="calls waterfall-table">
      <caption className="visually-hidden">
        Finished spans of operation {shortId}, by start, in milliseconds from the first
      </caption>
      <thead>
        <tr>
          <th scope="col">Span</th>
          <th scope="col">Start (ms)</th>
          <th scope="col">Duration (ms)</th>
          <th scope="col">Outcome</th>
          <th scope="col">
            <span className="visually-hidden">Bar</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {spans.map((span) => (
          <tr key={span.spanId} className={span.failed ? "bad" : undefined}>
            <th scope="row" style={{ paddingLeft: `${0.4 + (depth.get(span.spanId) ?? 0) * 0.8}rem` }}>
              {labelOf(span)}
            </th>
            <td>{ms(span.startMs)}</td>
            <td>{ms(span.durationMs)}</td>
            <td>{outcomeOf(span)}</td>
            <td className="waterfall-track" aria-hidden="true">
              <span
                className="waterfall-bar"
                style={{
                  marginLeft: `${(span.startMs / total) * 100}%`,
                  width: `${Math.max((span.durationMs / total) * 100, 0.5)}%`,
                }}
              />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
