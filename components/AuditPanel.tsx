"use client";

import { useQuery } from "@tanstack/react-query";
import type { UserAudit } from "./api";
import { auditQuery } from "./queries";

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour12: false }) + iso.slice(19, 23);

/** "settling until 10:15:32.120", or "settling" when nobody knows until when. */
export const settlingWords = (settlingUntil: string | null): string =>
  settlingUntil === null ? "settling" : `settling until ${clock(settlingUntil)}`;

/**
 * The audit as the page shows it. While an operation runs, a half-done switch waits for its repair or a
 * provider call may still land, what the provider shows is a moment in between, not a verdict: it is shown
 * as settling, calmly. Red (an alert) is kept for what stays wrong once nothing more can change it. Only that is announced: settling and
 * consistent follow every switch, whose own answer is already its one announcement.
 */
export function AuditPanel({ selected }: { selected: string | null }) {
  const audit = useQuery(auditQuery());
  const report = audit.data;
  if (!report) {
    return (
      <section className="card" aria-labelledby="audit-heading">
        <h2 id="audit-heading">Audit: app vs provider</h2>
        <p>{audit.error ? audit.error.message : "Checking…"}</p>
      </section>
    );
  }
  const wrong = report.users.filter((user) => user.settled && !user.consistent);
  const settling = report.users.filter((user) => !user.settled);
  return (
    <section className="card" aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit: app vs provider</h2>
      {wrong.length > 0 && (
        <div role="alert">
          <p className="verdict bad" data-testid="audit-verdict">
            Inconsistent: the provider and the app disagree, and no call that may still land will change it.
          </p>
          <ul>
            {wrong.map((user) => (
              <li key={user.userId}>
                <strong>{user.userId}</strong>
                <Findings user={user} selected={selected} />
              </li>
            ))}
          </ul>
        </div>
      )}
      {settling.length > 0 && (
        <div>
          <p className="verdict settling" data-testid={wrong.length > 0 ? undefined : "audit-verdict"}>
            Settling: an operation is running, a half-done switch waits for its repair, or a provider call may still
            land. What the provider shows now is a moment in between, not a verdict.
          </p>
          <ul>
            {settling.map((user) => (
              <li key={user.userId}>
                <strong>{user.userId}</strong>: {settlingWords(user.settlingUntil)}
                {user.consistent ? "" : "; for now:"}
                {!user.consistent && <Findings user={user} selected={selected} />}
              </li>
            ))}
          </ul>
        </div>
      )}
      {wrong.length === 0 && settling.length === 0 && (
        <p className="verdict ok" data-testid="audit-verdict">
          Consistent: every user&apos;s identities sit in one provider account, under the local primary.
        </p>
      )}
    </section>
  );
}

function Findings({ user, selected }: { user: UserAudit; selected: string | null }) {
  return (
    <ul>
      {user.findings.map((finding) => (
        <li
          key={finding.violation}
          className={selected && finding.operationIds.includes(selected) ? "selected" : undefined}
        >
          {finding.violation}
          {finding.operationIds.length > 0 && (
            <>
              {" "}
              — {user.settled ? "caused by" : "touched by"}{" "}
              {finding.operationIds.slice(0, 3).map((operationId) => (
                <a key={operationId} href={`#operation-${operationId}`} className="operation-link">
                  operation {operationId.slice(0, 8)}
                </a>
              ))}
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
