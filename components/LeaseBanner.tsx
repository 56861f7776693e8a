"use client";

import type { Lane, LeaseRow, Strategy } from "./api";

/** What guards the switch under each strategy other than the lease, in plain words. */
const otherGuards: Partial<Record<Strategy, string>> = {
  none: "Nothing guards the switch: concurrent switches all call the provider.",
  transaction:
    "A row lock (SELECT … FOR UPDATE) held by an open transaction on a pooled connection guards " +
    "the switch; the others wait, holding connections too.",
  advisory:
    "An advisory lock (pg_advisory_xact_lock) held by an open transaction on a pooled connection " +
    "guards the switch; the others wait, holding connections too.",
  optimistic:
    "A version check at the final save guards the switch: a loser learns it lost only after it changed the provider.",
};

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour12: false }) + iso.slice(19, 23);
const secondsBetween = (from: number, to: number) => (Math.abs(to - from) / 1000).toFixed(1);

/** The lease row in a sentence and a tone: free, held (and for how long), or expired (and what that means). */
function leaseHeadline(lease: LeaseRow | null, lanes: Lane[], now: number): { headline: string; tone: string } {
  const holder = lease?.operationId ? lanes.find((lane) => lane.operationId === lease.operationId) : undefined;
  const expiresAt = lease?.expiresAt ? Date.parse(lease.expiresAt) : null;
  if (!lease?.held || expiresAt === null) {
    return { headline: "Lease free — no operation is running for this user", tone: "free" };
  }
  if (expiresAt > now) {
    const operation = lease.operationId?.slice(0, 8) ?? "?";
    return {
      headline: `Lease held by operation ${operation} — expires in ${secondsBetween(now, expiresAt)} s`,
      tone: "held",
    };
  }
  const headline =
    holder && holder.answeredAt === null
      ? `Lease expired ${secondsBetween(expiresAt, now)} s ago; operation ` +
        `${holder.operationId.slice(0, 8)} is still running unprotected`
      : `Lease expired ${secondsBetween(expiresAt, now)} s ago, never released: the next acquire takes it over`;
  return { headline, tone: "expired" };
}

/** The lease's columns as the database sees them. */
function LeaseColumns({ lease }: { lease: LeaseRow | null }) {
  return (
    <dl className="lease-row" aria-label="The lease's columns as the database sees them">
      <div>
        <dt>locked_at</dt>
        <dd>{lease?.lockedAt ? clock(lease.lockedAt) : "null"}</dd>
      </div>
      <div>
        <dt>expires</dt>
        <dd>{lease?.expiresAt ? clock(lease.expiresAt) : "null"}</dd>
      </div>
      <div>
        <dt>token</dt>
        <dd>{lease?.token ?? "null"}</dd>
      </div>
      <div>
        <dt>fence</dt>
        <dd>{lease?.fence ?? "–"}</dd>
      </div>
    </dl>
  );
}

/**
 * The truth about what guards this user's switch: under `lease`, the row as the database sees it (held or
 * not, expired while its operation still runs, the last acquire's answer); otherwise, what guards it instead.
 */
export function LeaseBanner({
  strategy,
  lease,
  lanes,
  now,
}: {
  strategy: Strategy;
  lease: LeaseRow | null;
  lanes: Lane[];
  now: number;
}) {
  if (strategy !== "lease") {
    const running = lanes.filter((lane) => lane.answeredAt === null).length;
    return (
      <div className="lease other" data-testid="guard-banner">
        <p>
          <strong>Strategy {strategy}.</strong> {otherGuards[strategy] ?? "See the lab's controls for what it does."}
        </p>
        <p>{running === 1 ? "1 operation running." : `${running} operations running.`}</p>
      </div>
    );
  }
  const lastAcquire = lanes
    .flatMap((lane) => lane.phases.filter((phase) => phase.name === "acquire" && phase.outcome !== null))
    .at(-1);
  const { headline, tone } = leaseHeadline(lease, lanes, now);
  return (
    <div className={`lease ${tone}`} data-testid="guard-banner">
      <p>{headline}</p>
      <LeaseColumns lease={lease} />
      {lastAcquire && <p className="hint">Last acquire: {lastAcquire.detail}</p>}
    </div>
  );
}
