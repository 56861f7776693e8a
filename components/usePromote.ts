"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, ApiError, type Problem, type PromoteResult, type Strategy, type UserView } from "./api";
import { userQuery, userReadStartedAt } from "./queries";

/** One click on "Make primary" and what became of it. */
export interface Attempt {
  id: number;
  identityId: string;
  startedAt: number;
  /** When its answer arrived (this browser's clock). */
  answeredAt?: number;
  /** The peer instance it was relayed to; none: this instance. */
  peer?: number;
  /** The strategy in force when it was sent: what its failure means depends on it. */
  strategy?: Strategy;
  result?: PromoteResult;
  problem?: Problem;
}

/**
 * The clicks sent together (a double click, quick clicks on several cards). A click while none of them
 * is pending starts the next round: the cards show only the latest round.
 */
interface Round {
  userId: string;
  attempts: Attempt[];
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

const isPending = (attempt: Attempt) => !attempt.result && !attempt.problem;

/**
 * Whether a switch since the round (another tab's, a script's, the reconciler's) moved the primary away
 * from an identity the round says is primary: then its "Switched: now primary" is about an earlier
 * state. Judged only on a read of the user that started after the round's last answer. A round of
 * refusals and failures only stays until this page's next switch: it was true of its moment.
 */
function outdated(round: Round, user: UserView | undefined, fetching: boolean): boolean {
  if (!user || fetching || round.attempts.some(isPending)) return false;
  const lastAnswer = Math.max(...round.attempts.map((attempt) => attempt.answeredAt ?? 0));
  if ((userReadStartedAt.get(round.userId) ?? 0) <= lastAnswer) return false;
  return round.attempts.some(
    (attempt) => attempt.result && attempt.result.primaryIdentityId !== user.primaryIdentityId,
  );
}

/**
 * "Make primary" for one user: each click sends its request and becomes an attempt with its outcome. The
 * cards show the latest round of clicks; it ends at this page's next switch (a click, or `endRound`: a
 * burst, a demo) or once a read of the user shows that a later switch moved the primary it set.
 */
export function usePromote(userId: string | undefined, strategy?: Strategy) {
  // Each click's own outcome: the mutation's state would only show the latest of concurrent clicks.
  const [round, setRound] = useState<Round | null>(null);
  const user = useQuery({ ...userQuery(userId ?? ""), enabled: userId !== undefined });
  const current = round?.userId === userId ? round : null;
  // Adjusted while rendering (React's pattern for state derived from a change), so no stale frame shows.
  if (current && outdated(current, user.data, user.isFetching)) setRound(null);
  const promote = useMutation({
    mutationFn: ({ identityId, peer }: { identityId: string; peer?: number }) =>
      api<PromoteResult>(`${peer ? `/api/lab/relay/${peer}` : "/api"}/users/${userId}/primary`, {
        method: "POST",
        body: JSON.stringify({ identityId }),
      }),
  });

  /** Sends the switch to this instance, or to a peer instance through the relay. */
  function makePrimary(identityId: string, peer?: number) {
    if (!userId) return;
    const attempt = newAttempt(identityId, strategy, peer);
    const settle = (outcome: Partial<Attempt>) =>
      setRound(
        (each) =>
          each && {
            ...each,
            attempts: each.attempts.map((one) =>
              one.id === attempt.id ? { ...one, ...outcome, answeredAt: Date.now() } : one,
            ),
          },
      );
    setRound((each) =>
      each?.userId === userId && each.attempts.some(isPending)
        ? { ...each, attempts: [...each.attempts, attempt].slice(-attemptsKept) }
        : { userId, attempts: [attempt] },
    );
    promote.mutateAsync({ identityId, peer }).then(
      (result) => settle({ result }),
      (error: unknown) => settle({ problem: error instanceof ApiError ? error.problem : unexpected(error) }),
    );
  }

  const attempts = current?.attempts ?? [];
  return {
    attempts,
    pending: attempts.some(isPending),
    makePrimary,
    endRound: () => setRound(null),
  };
}

export type Promote = ReturnType<typeof usePromote>;

function unexpected(error: unknown): Problem {
  return {
    type: "about:blank",
    title: "Request failed",
    status: 0,
    detail: error instanceof Error ? error.message : String(error),
  };
}
