"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api, ApiError, type Problem, type PromoteResult, type Strategy } from "./api";

/** One click on "Make primary" and what became of it. */
export interface Attempt {
  id: number;
  identityId: string;
  startedAt: number;
  /** The peer instance it was relayed to; none: this instance. */
  peer?: number;
  /** The strategy in force when it was sent: what its failure means depends on it. */
  strategy?: Strategy;
  result?: PromoteResult;
  problem?: Problem;
}

let attemptCounter = 0;
const newAttempt = (identityId: string, strategy?: Strategy, peer?: number): Attempt => ({
  id: ++attemptCounter,
  identityId,
  strategy,
  peer,
  startedAt: Date.now(),
});

/** Only the latest attempts are kept: a row shows its last few. */
const attemptsKept = 20;

/** "Make primary" for one user: each click sends its request and becomes an attempt with its outcome. */
export function usePromote(userId: string, strategy?: Strategy) {
  // Each click's own outcome: the mutation's state would only show the latest of concurrent clicks.
  const [attempts, setAttempts] = useState<Attempt[]>([]);
  const promote = useMutation({
    mutationFn: ({ identityId, peer }: { identityId: string; peer?: number }) =>
      api<PromoteResult>(`${peer ? `/api/lab/relay/${peer}` : "/api"}/users/${userId}/primary`, {
        method: "POST",
        body: JSON.stringify({ identityId }),
      }),
  });

  /** Sends the switch to this instance, or to a peer instance through the relay. */
  function makePrimary(identityId: string, peer?: number) {
    const attempt = newAttempt(identityId, strategy, peer);
    const settle = (outcome: Partial<Attempt>) =>
      setAttempts((all) => all.map((each) => (each.id === attempt.id ? { ...each, ...outcome } : each)));
    setAttempts((all) => [...all, attempt].slice(-attemptsKept));
    promote.mutateAsync({ identityId, peer }).then(
      (result) => settle({ result }),
      (error: unknown) => settle({ problem: error instanceof ApiError ? error.problem : unexpected(error) }),
    );
  }

  const pending = attempts.some((attempt) => !attempt.result && !attempt.problem);
  return { attempts, pending, makePrimary };
}

function unexpected(error: unknown): Problem {
  return {
    type: "about:blank",
    title: "Request failed",
    status: 0,
    detail: error instanceof Error ? error.message : String(error),
  };
}
