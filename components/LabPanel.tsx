"use client";

import { bounds, strategies } from "@/lib/lab/settings-schema";
import type { Strategy } from "./api";
import { FaultControls } from "./FaultControls";
import { CheckboxField, Field, NumberField } from "./fields";
import { useLabSettings } from "./useLab";

const strategyInfo: Record<Strategy, { label: string; explanation: string }> = {
  lease: {
    label: "Lease lock (locked_at on the row)",
    explanation:
      "One UPDATE takes the lease, another frees it. Losers are answered 409 at once; no connection is held during the provider calls.",
  },
  none: {
    label: "No lock",
    explanation:
      "Nothing keeps two switches apart: both read the same primary, both call the provider, and the provider ends up split.",
  },
  transaction: {
    label: "Transaction + SELECT … FOR UPDATE",
    explanation:
      "Correct, but each request holds a pooled connection for the whole provider call, " +
      "the waiting ones too: other users wait for the pool.",
  },
  advisory: {
    label: "Advisory lock (pg_advisory_xact_lock)",
    explanation:
      "The same cost as the transaction: the lock lives in an open transaction, which pins a connection while the provider is slow.",
  },
  optimistic: {
    label: "Optimistic version check",
    explanation:
      "Detects the lost race at the final UPDATE (409 stale-write), but only after the provider was already changed.",
  },
  "session-advisory": {
    label: "Session advisory lock (pg_advisory_lock)",
    explanation:
      "No transaction, but a pinned connection per switch (and per waiter); " +
      "if that connection drops, the lock is gone and another switch gets in.",
  },
  "in-process": {
    label: "In-process mutex (a promise chain in memory)",
    explanation:
      "Safe while one app instance serves every request; a second instance has its own memory and does not wait.",
  },
  redis: {
    label: "Redis lock (SET NX PX, token-checked release)",
    explanation:
      "Holds no database connection; but its token is no fence: a holder paused past the TTL still " +
      "writes, and a Redis restart without persistence lets a second holder in. " +
      "Needs npm run dev -- --redis.",
  },
};

export function LabPanel() {
  const { settings, error, update } = useLabSettings();

  if (!settings) return <section className="card">{error ? error.message : "Loading the lab…"}</section>;

  return (
    <section className="card" aria-labelledby="lab-heading">
      <h2 id="lab-heading">Strategy</h2>
      <Field label="How concurrent switches are kept apart">
        {(id) => (
          <select
            id={id}
            value={settings.strategy}
            onChange={(event) => update.mutate({ strategy: event.target.value as Strategy })}
          >
            {strategies.map((strategy) => (
              <option key={strategy} value={strategy}>
                {strategyInfo[strategy].label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <p className="explanation">{strategyInfo[settings.strategy].explanation}</p>
      <NumberField
        label="Lease TTL (ms)"
        value={settings.leaseTtlMs}
        {...bounds.leaseTtlMs}
        step={500}
        onCommit={(leaseTtlMs) => update.mutate({ leaseTtlMs })}
      />
      <NumberField
        label="Connection pool size"
        value={settings.poolSize}
        {...bounds.poolSize}
        step={1}
        onCommit={(poolSize) => update.mutate({ poolSize })}
      />
      <CheckboxField
        label="Lease safeguards"
        hint="deadline inside the lease, renewal, checks before each step; off: the textbook lease"
        checked={settings.leaseSafeguards}
        onToggle={(checked) => update.mutate({ leaseSafeguards: checked })}
      />
      <CheckboxField
        label="Lock column mapped"
        hint="a rename saves every column it read, the lease's too (as an ORM mapping them does): it wipes a lease taken meanwhile"
        checked={settings.lockColumnMapped}
        onToggle={(checked) => update.mutate({ lockColumnMapped: checked })}
      />
      <CheckboxField
        label="Client guard"
        hint="disable the buttons while a request is pending"
        checked={settings.clientGuard}
        onToggle={(checked) => update.mutate({ clientGuard: checked })}
      />
      <FaultControls />
      {update.error && <p role="alert">{update.error.message}</p>}
      <div className="row">
        <a href="/" target="_blank" rel="noopener">
          Open a second tab
        </a>
      </div>
    </section>
  );
}
