"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { api, type BurstReport, type UserView } from "./api";
import { Field, NumberField } from "./fields";

/** "Fire N concurrent clicks": stages the race on the server, without a fast finger. */
export function BurstControl({ user }: { user: UserView }) {
  const [count, setCount] = useState(10);
  const [target, setTarget] = useState("");
  const burst = useMutation({
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
          <p className={burst.data.audit.consistent ? "verdict ok" : "verdict bad"}>
            {burst.data.audit.consistent ? "Audit: consistent" : `Audit: ${burst.data.audit.violations.join("; ")}`}
          </p>
        </div>
      )}
      {burst.error && <p role="alert">{burst.error.message}</p>}
    </section>
  );
}
