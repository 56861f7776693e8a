"use client";

import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { DemoOutcome } from "./DemoOutcome";
import { firstClickHint } from "./first-click";
import { labSettingsQuery } from "./queries";
import { demoDefaultUser, demoSubject, useDemo, type DemoKind } from "./useDemo";

const demos: { kind: DemoKind; label: string; what: string }[] = [
  {
    kind: "corruption",
    label: "Show the corruption",
    what: "No lock: two switches at once, to two different identities.",
  },
  { kind: "fix", label: "Show the fix", what: "The lease: the same two switches at once." },
];

/**
 * The first card: what to click first under the strategy in force, and two buttons that stage the
 * collision and its fix from the seed, each in one click. `userId` undefined: the session is not known
 * yet (the buttons wait for it); null: nobody is signed in (they sign in as the demo user).
 */
export function StartHere({ userId, onSwitch }: { userId: string | null | undefined; onSwitch: () => void }) {
  const settings = useQuery(labSettingsQuery());
  const demo = useDemo(userId ?? null, onSwitch);
  const ids = useId();
  const subject = demoSubject(userId ?? demoDefaultUser);
  return (
    <section className="card start-here" aria-labelledby="start-heading">
      <h2 id="start-heading">Start here</h2>
      <p className="explanation">{firstClickHint(settings.data)}</p>
      <div className="demo-buttons">
        {demos.map(({ kind, label, what }) => (
          <div key={kind} className="demo-button">
            <button
              type="button"
              onClick={() => demo.mutate(kind)}
              disabled={demo.isPending || !subject || userId === undefined}
              aria-describedby={`${ids}-${kind}`}
            >
              {label}
            </button>
            <small id={`${ids}-${kind}`}>{what}</small>
          </div>
        ))}
      </div>
      <p className="hint">
        {subject
          ? `Each starts from the seed: it resets the lab (its settings too) for every tab` +
            `${userId ? "" : `, and signs you in as ${subject.displayName}`}. Then it sends both switches to ` +
            `${subject.targets.map((target) => target.label).join(" and ")}.`
          : "This user has fewer than three identities: the demo needs two besides the primary. " +
            "Sign out and sign in as Ada Lovelace to run it."}
      </p>
      {demo.isPending && <p className="explanation">Resetting the lab, then sending the two switches…</p>}
      <DemoOutcome run={demo.data} />
      {demo.error && <p role="alert">{demo.error.message}</p>}
    </section>
  );
}
