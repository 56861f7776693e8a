"use client";

import { useQuery } from "@tanstack/react-query";
import { api } from "../api";
import type { ExperimentRun, ProviderCall } from "./types";

const rowHeight = 22;
const labelWidth = 90;
const width = 640;

/**
 * The run's operations as simple bars: one lane per operation, one bar per provider call (from the
 * provider's call log, which holds the calls of the run's last variant). Meant to be swapped for the
 * shared timeline once it exists.
 */
export function RunTimeline({ run }: { run: ExperimentRun }) {
  const provider = useQuery({
    queryKey: ["provider", "run", run.id, run.endedAt],
    queryFn: () => api<{ calls: ProviderCall[] }>("/api/lab/provider"),
  });
  const calls = (provider.data?.calls ?? []).filter(
    (call) => call.operationId && run.operationIds.includes(call.operationId),
  );
  const lanes = run.operationIds.filter((id) => calls.some((call) => call.operationId === id));
  if (lanes.length === 0) return <p className="hint">No provider calls left in the log for this run.</p>;
  const ends = calls.map((call) => Date.parse(call.at));
  const starts = calls.map((call) => Date.parse(call.at) - call.durationMs);
  const from = Math.min(...starts);
  const span = Math.max(1, Math.max(...ends) - from);
  const x = (ms: number) => labelWidth + ((ms - from) / span) * (width - labelWidth - 10);
  return (
    <figure className="run-timeline">
      <svg
        width={width}
        height={lanes.length * rowHeight + 20}
        role="img"
        aria-label={`Timeline of the run: ${lanes.length} operations, ${calls.length} provider calls over ${span} ms`}
      >
        {lanes.map((operationId, lane) => (
          <g key={operationId} transform={`translate(0, ${lane * rowHeight})`}>
            <text x={0} y={15} fontSize={11}>
              op {operationId.slice(0, 8)}
            </text>
            {calls
              .filter((call) => call.operationId === operationId)
              .map((call, index) => {
                const end = Date.parse(call.at);
                const start = end - call.durationMs;
                const ok = call.status >= 200 && call.status < 300;
                return (
                  <rect
                    key={index}
                    x={x(start)}
                    y={4}
                    width={Math.max(2, x(end) - x(start))}
                    height={14}
                    fill={ok ? "#3a7d44" : "#b3261e"}
                  >
                    <title>{`${call.method} ${call.path} → ${call.status || call.outcome} (${call.durationMs} ms)`}</title>
                  </rect>
                );
              })}
          </g>
        ))}
        <text x={labelWidth} y={lanes.length * rowHeight + 15} fontSize={10}>
          0 ms
        </text>
        <text x={width - 60} y={lanes.length * rowHeight + 15} fontSize={10}>
          {span} ms
        </text>
      </svg>
      <figcaption className="hint">Provider calls per operation: green applied, red refused or failed.</figcaption>
    </figure>
  );
}
