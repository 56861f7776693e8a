"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, ApiError, type Problem, type PromoteResult } from "./api";
import { BurstControl } from "./BurstControl";
import { EventsPanel } from "./EventsPanel";
import { invalidateAfterSwitch, labSettingsQuery, userQuery } from "./queries";
import { useNow } from "./useNow";

/** One click on "Make primary" and what became of it. */
interface Attempt {
  id: number;
  identityId: string;
  startedAt: number;
  result?: PromoteResult;
  problem?: Problem;
}

let attemptCounter = 0;
const newAttempt = (identityId: string): Attempt => ({ id: ++attemptCounter, identityId, startedAt: Date.now() });

export function IdentityPanel({ userId }: { userId: string }) {
  const queryClient = useQueryClient();
  const settings = useQuery(labSettingsQuery());
  const user = useQuery(userQuery(userId));
  const [attempts, setAttempts] = useState<Attempt[]>([]);
  const promote = useMutation({
    mutationFn: (identityId: string) =>
      api<PromoteResult>(`/api/users/${userId}/primary`, { method: "POST", body: JSON.stringify({ identityId }) }),
    // Not awaited: the click's outcome shows at once, not after the refetches.
    onSettled: () => {
      void invalidateAfterSwitch(queryClient, userId);
    },
  });

  const pending = attempts.filter((attempt) => !attempt.result && !attempt.problem);
  const now = useNow(pending.length > 0 || Boolean(user.data?.lease.held));
  // With the client guard off, nothing stops a second click: the server must.
  const guardBlocks = Boolean(settings.data?.clientGuard) && pending.length > 0;

  function makePrimary(identityId: string) {
    const attempt = newAttempt(identityId);
    const settle = (outcome: Partial<Attempt>) =>
      setAttempts((all) => all.map((each) => (each.id === attempt.id ? { ...each, ...outcome } : each)));
    setAttempts((all) => [...all.slice(-20), attempt]);
    promote.mutateAsync(identityId).then(
      (result) => settle({ result }),
      (error: unknown) => settle({ problem: error instanceof ApiError ? error.problem : unexpected(error) }),
    );
  }

  if (!user.data) return <p>{user.error ? user.error.message : "Loading…"}</p>;
  const { lease } = user.data;

  return (
    <>
      <h2 id="identities-heading">{user.data.displayName}&apos;s identities</h2>
      <p className={lease.held ? "lease held" : "lease free"} role="status" aria-live="polite">
        {lease.held && lease.expiresAt
          ? `Lease held${user.data.operation ? ` by operation ${user.data.operation.operationId.slice(0, 8)}, switching to ${user.data.operation.toIdentityId}: ${stepWords[user.data.operation.step] ?? user.data.operation.step}` : ""} — expires in ${secondsUntil(lease.expiresAt, now)} s`
          : "Lease free — no operation is running for this user"}
      </p>
      <ul className="identities" aria-label="Linked identities">
        {user.data.identities.map((identity) => {
          const mine = attempts.filter((attempt) => attempt.identityId === identity.id).slice(-3);
          return (
            <li
              key={identity.id}
              className={identity.isPrimary ? "identity primary" : "identity"}
              data-identity-id={identity.id}
            >
              <div className="identity-main">
                <span className="identity-label">{identity.label}</span>
                <code>{identity.id}</code>
              </div>
              {identity.isPrimary ? (
                <span className="badge" aria-label={`${identity.label} is primary`}>
                  Primary
                </span>
              ) : (
                <button
                  type="button"
                  onClick={() => makePrimary(identity.id)}
                  disabled={guardBlocks}
                  aria-label={`Make ${identity.label} primary`}
                >
                  Make primary
                </button>
              )}
              {mine.length > 0 && (
                <ul className="outcomes" aria-label={`Attempts for ${identity.label}`}>
                  {mine.map((attempt) => (
                    <AttemptOutcome key={attempt.id} attempt={attempt} now={now} />
                  ))}
                </ul>
              )}
            </li>
          );
        })}
      </ul>
      <EventsPanel userId={userId} />
      <BurstControl user={user.data} />
    </>
  );
}

function AttemptOutcome({ attempt, now }: { attempt: Attempt; now: number }) {
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

/** What a running switch is doing, from the last step its journal reached. */
const stepWords: Record<string, string> = {
  acquired: "unlinking at the provider",
  unlinked: "unlinked, now linking",
  linked: "linked, now saving",
  saved: "saved, releasing",
  done: "done, releasing",
};

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

function unexpected(error: unknown): Problem {
  return {
    type: "about:blank",
    title: "Request failed",
    status: 0,
    detail: error instanceof Error ? error.message : String(error),
  };
}

function secondsUntil(iso: string, now: number): string {
  return Math.max(0, (Date.parse(iso) - now) / 1000).toFixed(1);
}
