"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, ApiError } from "../api";
import { RunTimeline } from "./RunTimeline";
import { isSweep, TtlSweepChart } from "./TtlSweepChart";
import type { ExperimentRun, ListedExperiment } from "./types";

/** One experiment: its question, Run, and after a run its timeline, measured facts and explanation. */
export function ExperimentCardView({ card }: { card: ListedExperiment }) {
  const queryClient = useQueryClient();
  const run = useMutation({
    mutationFn: () => api<ExperimentRun>(`/api/lab/experiments/${card.id}/run`, { method: "POST" }),
    // The run left the lab in its end state: everything else on the page is stale.
    onSuccess: () => queryClient.invalidateQueries({ predicate: (query) => query.queryKey[0] !== "experiments" }),
  });
  const result = run.data;
  return (
    <section className="card experiment" aria-labelledby={`${card.id}-title`} data-experiment={card.id}>
      <h2 id={`${card.id}-title`}>{card.title}</h2>
      <p className="question">{card.question}</p>
      {card.failureMode && <p className="hint">Failure mode: {card.failureMode}</p>}
      <p className="hint">Expected: {card.expected}</p>
      {card.needs.length > 0 && (
        <p className="hint" id={`${card.id}-needs`}>
          {card.available
            ? `Runs on ${card.needs.join(" and ")}, which this instance runs with.`
            : `Needs ${card.needs.join(" and ")}, which this instance does not run with: start the lab with ${card.startWith}.`}
        </p>
      )}
      <button
        type="button"
        onClick={() => run.mutate()}
        disabled={run.isPending || !card.available}
        aria-describedby={card.needs.length > 0 ? `${card.id}-needs` : undefined}
      >
        {run.isPending ? "Running…" : card.available ? "Run" : "Run (not available here)"}
      </button>
      {run.error && <p role="alert">{run.error instanceof ApiError ? run.error.problem.detail : run.error.message}</p>}
      {result && (
        <div className="run-result">
          <p className={result.verdict === "as-expected" ? "verdict ok" : "verdict bad"}>
            Verdict: {result.verdict === "as-expected" ? "as expected" : "unexpected"}
          </p>
          <RunTimeline run={result} />
          {isSweep(result.observed.sweep) && (
            <TtlSweepChart
              sweep={result.observed.sweep}
              recommendedTtlMs={
                typeof result.observed.recommendedTtlMs === "number" ? result.observed.recommendedTtlMs : null
              }
            />
          )}
          <h3>What happened, and why</h3>
          <p className="explanation">{result.explanation}</p>
          <details>
            <summary>Measured facts</summary>
            <pre>{JSON.stringify(result.observed, null, 2)}</pre>
          </details>
          <p className="hint">Try next by hand: {card.tryNext}</p>
        </div>
      )}
    </section>
  );
}
