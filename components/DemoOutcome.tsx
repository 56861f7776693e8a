"use client";

import { useQuery } from "@tanstack/react-query";
import type { BurstReport, UserAudit } from "./api";
import { settlingWords } from "./AuditPanel";
import { auditQuery } from "./queries";
import type { DemoRun } from "./useDemo";

const strategyWords = { corruption: "No lock", fix: "The lease" } as const;

/** One switch's answer: its status, and the problem's title in the app's own words. */
const answerWords = ({ status, problem }: BurstReport["results"][number]): string =>
  status === 200 ? "200: switched" : `${status}: ${problem ?? "no problem title"}`;

const counted = (report: BurstReport) =>
  Object.entries(report.counts)
    .map(([status, times]) => `${times} × ${status}`)
    .join(" · ");

/**
 * The user's audit as last known: a read that arrived after the burst answered (the stream's, or the
 * read the demo asked for then), else the burst's own (read after both switches had answered).
 */
function useRunAudit(run: DemoRun | undefined): UserAudit | undefined {
  const audit = useQuery(auditQuery());
  const streamed = run && audit.dataUpdatedAt > run.answeredAt ? audit.data : undefined;
  return streamed?.users.find((user) => user.userId === run?.userId) ?? run?.report.audit;
}

/** The settled audit in its own words (AuditPanel's): only a settled one is said, so nothing can still change it. */
function verdictWords(audit: UserAudit, displayName: string): string {
  return audit.consistent
    ? `Audit: consistent: ${displayName}'s identities sit in one provider account, under the local primary.`
    : `Audit: inconsistent, and no call that may still land will change it: ${audit.violations.join("; ")}.`;
}

/**
 * What the last demo did, in words: each switch's answer, then the audit. The verdict line is the card's
 * one live region, present before the run and filled once the audit has settled: one announcement a run.
 */
export function DemoOutcome({ run }: { run: DemoRun | undefined }) {
  const audit = useRunAudit(run);
  const settled = audit?.settled === true;
  const tone = !settled ? "" : audit.consistent ? "verdict ok" : "verdict bad";
  return (
    <div className="demo-outcome">
      {run && (
        <>
          <p>
            {strategyWords[run.kind]}: two switches for {run.displayName} at once.
          </p>
          <ul aria-label="What each switch answered">
            {run.report.results.map((result, index) => {
              const label = run.targets.find((target) => target.identityId === result.identityId)?.label;
              return (
                <li key={index} className={result.status === 409 ? "demo-answer conflict" : "demo-answer"}>
                  To {label ?? result.identityId}: <strong>{answerWords(result)}</strong>
                </li>
              );
            })}
          </ul>
        </>
      )}
      <p role="status" className={tone || undefined} data-testid="demo-verdict">
        {run && settled ? `${counted(run.report)}. ${verdictWords(audit, run.displayName)}` : ""}
      </p>
      {run && audit && !settled && (
        <p className="verdict settling">
          {counted(run.report)}. Audit: {settlingWords(audit.settlingUntil)}; no verdict yet.
        </p>
      )}
    </div>
  );
}
