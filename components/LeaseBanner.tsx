"use client";

import type { UserView } from "./api";

/** What a running switch is doing, from the last step its journal reached. */
const stepWords: Record<string, string> = {
  acquired: "unlinking at the provider",
  unlinked: "unlinked, now linking",
  linked: "linked, now saving",
  saved: "saved, releasing",
  done: "done, releasing",
};

/** Whether the user's lease is held, by which operation, doing what, and for how long still. */
export function LeaseBanner({ user, now }: { user: UserView; now: number }) {
  const { lease, operation } = user;
  const heldBy = operation
    ? ` by operation ${operation.operationId.slice(0, 8)}, switching to ${operation.toIdentityId}: ` +
      (stepWords[operation.step] ?? operation.step)
    : "";
  return (
    <p className={lease.held ? "lease held" : "lease free"} role="status" aria-live="polite">
      {lease.held && lease.expiresAt
        ? `Lease held${heldBy} — expires in ${secondsUntil(lease.expiresAt, now)} s`
        : "Lease free — no operation is running for this user"}
    </p>
  );
}

function secondsUntil(iso: string, now: number): string {
  return Math.max(0, (Date.parse(iso) - now) / 1000).toFixed(1);
}
