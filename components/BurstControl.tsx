"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api, type BurstReport, type UserAudit, type UserView } from "./api";
import { settlingWords } from "./AuditPanel";
import { Field, NumberField } from "./fields";

/** "Fire N concurrent clicks": stages the race on the server, without a fast finger. */
export function BurstControl({ user, onFire }: { user: UserView; onFire: () => void }) {
  const [count, setCount] = useState(10);
  const [target, setTarget] = useState("");
  const burst = useMutation({
    onMutate: onFire,
    mutationFn: () =>
      api<BurstReport>("/api/lab/burst", {
        method: "POST",
        body: JSON.stringify({ userId: user.id, count, ...(target ? { identityId: target } : {}) }),
      }),
  });

  return (
    <section aria-labelledby="burst-heading" className="burst">
      <h3 id="burst-heading">Fire concurrent clicks</h3>
      <NumberField
        label="How many at once"
        value={count}
        min={1}
        max={50}
        step={1}
        onCommit={(value) => setCount(value ?? 1)}
      />
      <Field label="Target">
        {(id) => (
          <select id={id} value={target} onChange={(event) => setTarget(event.target.value)}>
            <option value="">a random identity for each click</option>
            {user.identities.map((identity) => (
              <option key={identity.id} value={identity.id}>
                {identity.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <button type="button" onClick={() => burst.mutate()} disabled={burst.isPending}>
        {burst.isPending ? `Firing ${count}…` : `Fire ${count} clicks`}
      </button>
      {burst.data && (
        <div role="status" className="burst-result">
          <p>
            {Object.entries(burst.data.counts)
              .map(([status, times]) => `${times} × ${status}`)
              .join(" · ")}
          </p>
          <BurstAudit audit={burst.data.audit} />
        </div>
      )}
      {burst.error && <p role="alert">{burst.error.message}</p>}
    </section>
  );
}

/** The audit right after the burst: a verdict only once nothing more can land (see the audit panel). */
function BurstAudit({ audit }: { audit: UserAudit }) {
  if (!audit.settled) {
    const inBetween = audit.consistent ? "" : ` (for now: ${audit.violations.join("; ")})`;
    return <p className="verdict settling">{`Audit: ${settlingWords(audit.settlingUntil)}${inBetween}`}</p>;
  }
  return (
    <p className={audit.consistent ? "verdict ok" : "verdict bad"}>
      {audit.consistent ? "Audit: consistent" : `Audit: ${audit.violations.join("; ")}`}
    </p>
  );
}
