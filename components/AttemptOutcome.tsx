"use client";

import type { Problem } from "./api";
import type { Attempt } from "./usePromote";

/** What became of one click: switched, refused or failed (with why), or still running. */
export function AttemptOutcome({ attempt, now }: { attempt: Attempt; now: number }) {
  if (attempt.result) {
    return (
      <li className="outcome ok" role="status">
        {attempt.result.changed ? "Switched: now primary" : "Already primary: nothing to do"}{" "}
        <small>operation {attempt.result.operationId.slice(0, 8)}</small>
      </li>
    );
  }
  if (attempt.problem) {
    return (
      <li className={attempt.problem.status === 409 ? "outcome conflict" : "outcome failed"} role="alert">
        {describeProblem(attempt.problem)}
      </li>
    );
  }
  return (
    <li className="outcome pending" role="status">
      Switching… unlink, then link at the provider ({((now - attempt.startedAt) / 1000).toFixed(1)} s)
    </li>
  );
}

function describeProblem(problem: Problem): string {
  const step = typeof problem.step === "string" ? problem.step : "a";
  if (problem.type.endsWith("/operation-in-progress")) return problem.title;
  if (problem.status === 502) {
    const status = problem.providerStatus ? `HTTP ${String(problem.providerStatus)}` : "no answer";
    return `The provider failed the ${step} step (${status}). ${problem.detail}`;
  }
  if (problem.status === 504) return `The lease's deadline ran out during the ${step} step; the lease was released.`;
  return `${problem.title}: ${problem.detail}`;
}
