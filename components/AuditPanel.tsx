"use client";

import { useQuery } from "@tanstack/react-query";
import { auditQuery } from "./queries";

export function AuditPanel({ selected }: { selected: string | null }) {
  const audit = useQuery(auditQuery());
  const report = audit.data;
  return (
    <section className="card" aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit: app vs provider</h2>
      {!report ? (
        <p>{audit.error ? audit.error.message : "Checking…"}</p>
      ) : report.consistent ? (
        <p className="verdict ok" role="status" data-testid="audit-verdict">
          Consistent: every user&apos;s identities sit in one provider account, under the local primary.
        </p>
      ) : (
        <div role="alert">
          <p className="verdict bad" data-testid="audit-verdict">
            Inconsistent: the provider and the app disagree.
          </p>
          <ul>
            {report.users
              .filter((user) => !user.consistent)
              .map((user) => (
                <li key={user.userId}>
                  <strong>{user.userId}</strong>
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
                            — caused by{" "}
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
                </li>
              ))}
          </ul>
        </div>
      )}
    </section>
  );
}
