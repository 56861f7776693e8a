"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, useSyncExternalStore } from "react";
import { api, ApiError } from "../api";
import { useNow } from "../useNow";
import { SavedRun } from "./SavedRun";
import type { ExperimentRun, ListedExperiment } from "./types";

/** Where the card remembers its last run, so that it survives navigating away and back. */
const lastRunKey = (experimentId: string) => `lease-lock-lab.learn.last-run.${experimentId}`;

interface LastRun {
  runId: string;
  verdict: ExperimentRun["verdict"];
}

const onStorage = (changed: () => void) => {
  window.addEventListener("storage", changed);
  return () => window.removeEventListener("storage", changed);
};

/** The card's last run as this browser remembers it (none while the page renders on the server). */
function useStoredRun(experimentId: string): LastRun | null {
  const stored = useSyncExternalStore(
    onStorage,
    () => window.localStorage.getItem(lastRunKey(experimentId)),
    () => null,
  );
  return stored ? (JSON.parse(stored) as LastRun) : null;
}

/** One experiment: its question, Run, and after a run its replay, measured facts and explanation. */
export function ExperimentCardView({ card }: { card: ListedExperiment }) {
  const queryClient = useQueryClient();
  const stored = useStoredRun(card.id);
  const [latest, setLatest] = useState<LastRun | null>(null);
  const last = latest ?? stored;
  const [startedAt, setStartedAt] = useState(0);
  const run = useMutation({
    mutationFn: () => api<ExperimentRun>(`/api/lab/experiments/${card.id}/run`, { method: "POST" }),
    onSuccess: (result) => {
      const saved = { runId: result.runId, verdict: result.verdict };
      window.localStorage.setItem(lastRunKey(card.id), JSON.stringify(saved));
      setLatest(saved);
      // The run put the lab back as it found it: the rest of the page reads it again.
      void queryClient.invalidateQueries({
        predicate: (query) => query.queryKey[0] !== "experiments" && query.queryKey[0] !== "run",
      });
    },
  });
  const now = useNow(run.isPending, 1_000);
  const elapsed = Math.max(0, Math.round((now - startedAt) / 1000));
  const start = () => {
    if (run.isPending || !card.available) return;
    setStartedAt(Date.now());
    run.mutate();
  };
  const verdictWords = last?.verdict === "as-expected" ? "as expected" : "unexpected";
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
      <div className="run-bar">
        {/* Never disabled while it runs: a disabled button would drop the keyboard's focus to the page. */}
        <button
          type="button"
          onClick={start}
          aria-disabled={run.isPending || !card.available}
          aria-describedby={card.needs.length > 0 ? `${card.id}-status ${card.id}-needs` : `${card.id}-status`}
        >
          {run.isPending
            ? "Running…"
            : !card.available
              ? "Run (not available here)"
              : last?.verdict === "unexpected"
                ? "Run again"
                : "Run"}
        </button>
        {run.isPending && (
          <>
            <progress aria-label={`${card.title}: running`} />
            <span className="hint">{elapsed} s</span>
          </>
        )}
      </div>
      <p
        id={`${card.id}-status`}
        role="status"
        className={last && !run.isPending ? `verdict ${last.verdict === "as-expected" ? "ok" : "bad"}` : "hint"}
      >
        {run.isPending
          ? "Running; the lab is put back as it was when the run ends."
          : last
            ? `Verdict: ${verdictWords}`
            : ""}
      </p>
      {last?.verdict === "unexpected" && !run.isPending && (
        <p className="hint">
          The measured facts did not show what was expected; the steps below say what was measured. A loaded machine can
          delay a step: run it again to see whether it repeats.
        </p>
      )}
      {run.error && <p role="alert">{run.error instanceof ApiError ? run.error.problem.detail : run.error.message}</p>}
      {last && <SavedRun key={last.runId} runId={last.runId} title={`Run of “${card.title}”`} showLink />}
      <p className="hint">Try next by hand: {card.tryNext}</p>
    </section>
  );
}
