"use client";

import type { Problem } from "./api";
import type { Attempt } from "./usePromote";

/**
 * What became of one click: switched, refused or failed (with the real cause), or still running. One
 * live region per click, empty while it runs, so its answer is its one announcement; the running time
 * beside it is not live.
 */
export function AttemptOutcome({ attempt, now }: { attempt: Attempt; now: number }) {
  if (attempt.result) {
    return (
      <li className="outcome ok">
        <span role="status">{attempt.result.changed ? "Switched: now primary" : "Already primary: nothing to do"}</span>{" "}
        <small>operation {attempt.result.operationId.slice(0, 8)}</small>
      </li>
    );
  }
  if (attempt.problem) {
    return (
      <li className={attempt.problem.status === 409 ? "outcome conflict" : "outcome failed"}>
        <span role="alert">{describeProblem(attempt.problem, attempt)}</span>
      </li>
    );
  }
  return (
    <li className="outcome pending">
      <span role="status" />
      <span>Switching… unlink, then link at the provider</span>{" "}
      <small>({(Math.max(0, now - attempt.startedAt) / 1000).toFixed(1)} s)</small>
    </li>
  );
}

function describeProblem(problem: Problem, attempt: Attempt): string {
  const step = typeof problem.step === "string" ? problem.step : "a";
  if (problem.type.endsWith("/operation-in-progress")) return problem.title;
  if (problem.status === 502) {
    const status = problem.providerStatus ? `HTTP ${String(problem.providerStatus)}` : "no answer";
    const cause =
      attempt.strategy === "none" && problem.providerStatus === 400
        ? " Cause: another switch had already moved the old primary; the audit tells what the provider is left with."
        : (attempt.strategy === "transaction" || attempt.strategy === "advisory") && step === "link"
          ? " The transaction was rolled back, but the provider's unlink was not undone: " +
            "rolling back the database cannot undo a call to another system."
          : "";
    return `The provider failed the ${step} step (${status}). ${problem.detail}${cause}`;
  }
  // Not "the lease was released": only the lease has one, and it keeps it while a call may still land.
  if (problem.status === 504) return `${problem.title} during the ${step} step.`;
  if (problem.type.endsWith("/stale-write"))
    return `${problem.title}: ${problem.detail} The provider was already changed by then: the audit tells what it is left with.`;
  return `${problem.title}: ${problem.detail}`;
}
