"use client";

import { useQuery } from "@tanstack/react-query";
import { poolQuery, userReadStartedAt } from "./queries";

/**
 * Says when this panel shows old data because the app's own read of it is queued for a pooled
 * connection (what `transaction` and `advisory` do to every request, the page's included).
 */
export function StaleNotice({ userId, fetching, now }: { userId: string; fetching: boolean; now: number }) {
  const pool = useQuery(poolQuery());
  const startedAt = userReadStartedAt.get(userId);
  const waitedMs = fetching && startedAt !== undefined ? now - startedAt : 0;
  const waiting = pool.data?.waiting ?? 0;
  if (waitedMs < 300 || waiting === 0) return null;
  return (
    <p className="stale" data-testid="stale-notice">
      Stale: the app&apos;s own read of this panel has waited {(waitedMs / 1000).toFixed(1)} s for a pooled connection (
      {waiting} waiting, {pool.data?.inUse} of {pool.data?.size} in use).
    </p>
  );
}
