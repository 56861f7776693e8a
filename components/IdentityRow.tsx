"use client";

import { AttemptOutcome } from "./AttemptOutcome";
import type { UserView } from "./api";
import type { Attempt } from "./usePromote";

type Identity = UserView["identities"][number];

/** One linked identity: its badge or its "Make primary" button, and the outcomes of its last clicks. */
export function IdentityRow({
  identity,
  attempts,
  now,
  disabled,
  onMakePrimary,
}: {
  identity: Identity;
  attempts: Attempt[];
  now: number;
  disabled: boolean;
  onMakePrimary: () => void;
}) {
  const latest = attempts.slice(-3);
  return (
    <li className={identity.isPrimary ? "identity primary" : "identity"} data-identity-id={identity.id}>
      <div className="identity-main">
        <span className="identity-label">{identity.label}</span>
        <code>{identity.id}</code>
      </div>
      {identity.isPrimary ? (
        <span className="badge">Primary</span>
      ) : (
        <button type="button" onClick={onMakePrimary} disabled={disabled}>
          {/* The accessible name starts with the visible text: "Make primary for GitHub · @ada". */}
          Make primary<span className="visually-hidden"> for {identity.label}</span>
        </button>
      )}
      {latest.length > 0 && (
        <ul className="outcomes" aria-label={`Attempts for ${identity.label}`}>
          {latest.map((attempt) => (
            <AttemptOutcome key={attempt.id} attempt={attempt} now={now} />
          ))}
        </ul>
      )}
    </li>
  );
}
