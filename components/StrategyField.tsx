"use client";

import { strategies } from "@/lib/lab/settings-schema";
import type { Strategy } from "./api";
import { Field } from "./fields";

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

/** The strategy in force, chosen from all of them, and what it does in a sentence. */
export function StrategyField({ strategy, onChange }: { strategy: Strategy; onChange: (strategy: Strategy) => void }) {
  return (
    <>
      <Field label="How concurrent switches are kept apart">
        {(id) => (
          <select id={id} value={strategy} onChange={(event) => onChange(event.target.value as Strategy)}>
            {strategies.map((each) => (
              <option key={each} value={each}>
                {strategyInfo[each].label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <p className="explanation">{strategyInfo[strategy].explanation}</p>
    </>
  );
}
