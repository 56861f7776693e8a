"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { IdentityRow } from "./IdentityRow";
import { InstancePicker } from "./InstancePicker";
import { LeaseBanner } from "./LeaseBanner";
import { StaleNotice } from "./StaleNotice";
import { labSettingsQuery, leaseQuery, timelineQuery, userQuery } from "./queries";
import { useNow } from "./useNow";
import type { Promote } from "./usePromote";

/** The signed-in user's identities, each with its "Make primary", under the truth about the lease. */
export function IdentityPanel({ userId, promote }: { userId: string; promote: Promote }) {
  const settings = useQuery(labSettingsQuery());
  const user = useQuery(userQuery(userId));
  const lease = useQuery(leaseQuery(userId));
  const timeline = useQuery(timelineQuery());
  const lanes = (timeline.data?.operations ?? []).filter((lane) => lane.userId === userId);
  const { attempts, pending, makePrimary } = promote;
  // The instance the next click goes to (a peer number), then back to this one.
  const [nextPeer, setNextPeer] = useState<number | null>(null);
  const leaseHeld = Boolean(lease.data?.held ?? user.data?.lease.held);
  const running = lanes.some((lane) => lane.answeredAt === null);
  // One clock for the lease's countdown and the running attempts' elapsed time; still while nothing runs.
  const browserNow = useNow(pending || running || leaseHeld || user.isFetching);
  const now = browserNow + (timeline.data?.clockOffsetMs ?? 0);
  // With the client guard off, nothing stops a second click: the server must.
  const guardBlocks = Boolean(settings.data?.clientGuard) && pending;

  if (!user.data) return <p>{user.error ? user.error.message : "Loading…"}</p>;

  return (
    <>
      <h2 id="identities-heading">{user.data.displayName}&apos;s identities</h2>
      <StaleNotice userId={userId} fetching={user.isFetching} now={browserNow} />
      {settings.data && (
        <LeaseBanner strategy={settings.data.strategy} lease={lease.data ?? null} lanes={lanes} now={now} />
      )}
      <InstancePicker peer={nextPeer} onChange={setNextPeer} />
      <ul className="identities" aria-label="Linked identities">
        {user.data.identities.map((identity) => (
          <IdentityRow
            key={identity.id}
            identity={identity}
            attempts={attempts.filter((attempt) => attempt.identityId === identity.id)}
            now={now}
            disabled={guardBlocks}
            onMakePrimary={() => {
              makePrimary(identity.id, nextPeer ?? undefined);
              setNextPeer(null);
            }}
          />
        ))}
      </ul>
    </>
  );
}
