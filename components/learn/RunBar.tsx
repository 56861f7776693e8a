"use client";

import { ApiError } from "../api";
import type { ListedExperiment } from "./types";
import type { useExperimentRun } from "./useExperimentRun";

/** Why a card cannot run here, or what it runs on: the parts it needs. */
export function NeedsNote({ card }: { card: ListedExperiment }) {
  if (card.needs.length === 0) return null;
  const parts = card.needs.join(" and ");
  return (
    <p className="hint" id={`${card.id}-needs`}>
      {card.available
        ? `Runs on ${parts}, which this instance runs with.`
        : card.awaitingParts
          ? `Needs ${parts}, which this instance is told of but which does not answer now: it can run once it answers.`
          : `Needs ${parts}, which this instance does not run with: start the lab with ${card.startWith}.`}
    </p>
  );
}

/** The Run button's words: a card that awaits a part says which, one whose part this instance lacks says so. */
function runLabel(card: ListedExperiment, running: boolean, last: ReturnType<typeof useExperimentRun>["last"]): string {
  if (running) return "Running…";
  if (card.awaitingParts) return `Run (waiting for ${card.needs.join(" and ")})`;
  if (!card.available) return "Run (not available here)";
  return last?.verdict === "unexpected" ? "Run again" : "Run";
}

/**
 * Run, while it runs a progress bar and the seconds, then the verdict in the card's live region. `more` sits
 * beside Run (the course's shipped run).
 */
export function RunBar({
  card,
  runner: { run, last, start, elapsedSeconds },
  more,
}: {
  card: ListedExperiment;
  runner: ReturnType<typeof useExperimentRun>;
  more?: React.ReactNode;
}) {
  const verdictWords = last?.verdict === "as-expected" ? "as expected" : "unexpected";
  return (
    <>
      <div className="run-bar">
        {/* Never disabled while it runs: a disabled button would drop the keyboard's focus to the page. */}
        <button
          type="button"
          onClick={start}
          aria-disabled={run.isPending || !card.available}
          aria-describedby={card.needs.length > 0 ? `${card.id}-status ${card.id}-needs` : `${card.id}-status`}
        >
          {runLabel(card, run.isPending, last)}
        </button>
        {run.isPending && (
          <>
            <progress aria-label={`${card.title}: running`} />
            <span className="hint">{elapsedSeconds} s</span>
          </>
        )}
        {more}
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
    </>
  );
}
