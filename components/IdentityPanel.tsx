"use client";

import { useQuery } from "@tanstack/react-query";
import { BurstControl } from "./BurstControl";
import { EventsPanel } from "./EventsPanel";
import { IdentityRow } from "./IdentityRow";
import { LeaseBanner } from "./LeaseBanner";
import { labSettingsQuery, userQuery } from "./queries";
import { useNow } from "./useNow";
import { usePromote } from "./usePromote";

export function IdentityPanel({ userId }: { userId: string }) {
  const settings = useQuery(labSettingsQuery());
  const user = useQuery(userQuery(userId));
  const { attempts, pending, makePrimary } = usePromote(userId);
  // One clock for the lease's countdown and the running attempts' elapsed time.
  const now = useNow(pending || Boolean(user.data?.lease.held));
  // With the client guard off, nothing stops a second click: the server must.
  const guardBlocks = Boolean(settings.data?.clientGuard) && pending;

  if (!user.data) return <p>{user.error ? user.error.message : "Loading…"}</p>;

  return (
    <>
      <h2 id="identities-heading">{user.data.displayName}&apos;s identities</h2>
      <LeaseBanner user={user.data} now={now} />
      <ul className="identities" aria-label="Linked identities">
        {user.data.identities.map((identity) => (
          <IdentityRow
            key={identity.id}
            identity={identity}
            attempts={attempts.filter((attempt) => attempt.identityId === identity.id)}
            now={now}
            disabled={guardBlocks}
            onMakePrimary={() => makePrimary(identity.id)}
          />
        ))}
      </ul>
      <EventsPanel userId={userId} />
      <BurstControl user={user.data} />
    </>
  );
}
