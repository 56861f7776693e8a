"use client";

import { useQuery } from "@tanstack/react-query";
import { BurstControl } from "./BurstControl";
import { RenameForm } from "./RenameForm";
import { userQuery } from "./queries";

/**
 * The signed-in user's other controls: a rename (the other writer of the user row) and a burst of
 * concurrent clicks (a switch of this page: it ends the cards' last round of answers). A card of their
 * own, so a phone shows Make primary, the timeline and the audit first.
 */
export function IdentityTools({ userId, onSwitch }: { userId: string; onSwitch: () => void }) {
  const user = useQuery(userQuery(userId));
  if (!user.data) return null;
  return (
    <section aria-labelledby="tools-heading" className="card identity-tools">
      <h2 id="tools-heading">More to try</h2>
      {/* A new name from elsewhere (another tab, a reset) starts the field over. */}
      <RenameForm key={user.data.displayName} user={user.data} />
      <BurstControl user={user.data} onFire={onSwitch} />
    </section>
  );
}
