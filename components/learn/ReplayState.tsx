"use client";

import { laneLabel } from "@/lib/lab/experiments/run-facts";
import { leaseRowAt, snapshotAt, type LeaseRow } from "./replay";
import type { RunRecord } from "./types";

const seconds = (at: number, from: number): string => `${((at - from) / 1000).toFixed(3)} s`;
/** When a read was made: a variant's first read comes before its first request, the picture's origin. */
const asRead = (at: string, from: number): string =>
  Date.parse(at) < from ? "as read before the first request" : `as read at ${seconds(Date.parse(at), from)}`;

/** The lease row in words: free, or who held it, with its fence and expiry; "as read" when it comes from a read. */
function leaseWords(row: LeaseRow, from: number, labels: Map<string, string>): string {
  const read = row.readAt ? ` (${asRead(row.readAt, from)})` : "";
  if (!row.held) return `free${read}`;
  const who = row.holder ? ` by ${laneLabel(labels, row.holder.operationId)}` : "";
  const until = row.expiresAt ? `, until ${seconds(Date.parse(row.expiresAt), from)}` : "";
  return `held${who}, fence ${row.fence}${until}${read}`;
}

/** The lab as the run found it at the moment shown: the lease row, the provider's accounts, the audit. */
export function ReplayState({
  run,
  at,
  from,
  labels,
}: {
  run: RunRecord;
  at: number;
  from: number;
  labels: Map<string, string>;
}) {
  const { state, audit } = snapshotAt(run, at);
  return (
    <dl className="replay-state" aria-label="The lab at this moment">
      <dt>Lease row</dt>
      <dd>{leaseWords(leaseRowAt(run, at), from, labels)}</dd>
      <dt>Provider accounts{state ? ` (${asRead(state.at, from)})` : ""}</dt>
      <dd>
        {state ? (
          <ul>
            {state.accounts.map((account) => (
              <li key={account.user_id}>
                {account.user_id}:{" "}
                {account.identities.map((identity) => `${identity.provider}|${identity.user_id}`).join(", ")}
              </li>
            ))}
            <li>local primary: {state.localPrimaryIdentityId ?? "unknown"}</li>
          </ul>
        ) : (
          "not read yet at this moment"
        )}
      </dd>
      <dt>Audit{audit ? ` (${asRead(audit.at, from)})` : ""}</dt>
      <dd>
        {audit?.audit
          ? audit.audit.consistent
            ? "consistent"
            : `inconsistent: ${audit.audit.violations.join("; ")}`
          : "not read yet in this variant (the run reads it at the end of each variant)"}
      </dd>
    </dl>
  );
}
