"use client";

import { useQuery } from "@tanstack/react-query";
import { AuditPanel } from "./AuditPanel";
import { HoldersPanel } from "./HoldersPanel";
import { IdentityPanel } from "./IdentityPanel";
import { IdentityTools } from "./IdentityTools";
import { PoolPanel } from "./PoolPanel";
import { labSettingsQuery, sessionQuery } from "./queries";
import { SettingsBanner } from "./SettingsBanner";
import { SignIn } from "./SignIn";
import { StartHere } from "./StartHere";
import { Timeline } from "./Timeline";
import { usePromote } from "./usePromote";

/**
 * The story, first on the page: where to start, the user's identities, the timeline and the audit. Every
 * switch this page sends (a click, a burst, a demo) ends the cards' last round of answers.
 */
export function Story({
  selected,
  onSelect,
}: {
  selected: string | null;
  onSelect: (operationId: string | null) => void;
}) {
  const session = useQuery(sessionQuery());
  const settings = useQuery(labSettingsQuery());
  const userId = session.data?.userId;
  const promote = usePromote(userId, settings.data?.strategy);
  return (
    <div className="story">
      <StartHere userId={session.isPending ? undefined : (userId ?? null)} onSwitch={promote.endRound} />
      <section aria-labelledby="identities-heading" className="card identities-card">
        {session.isPending ? (
          <p>Loading…</p>
        ) : userId ? (
          <IdentityPanel userId={userId} promote={promote} />
        ) : (
          <SignIn />
        )}
      </section>
      <div className="story-main">
        <Timeline selected={selected} onSelect={onSelect} />
        <AuditPanel selected={selected} />
        {/* Right after the audit; on a phone after the timeline, which follows the verdict within one screen. */}
        <SettingsBanner />
        {/* Under `transaction` each switch holds a pooled connection for its whole run: the gauge is the lesson. */}
        {settings.data?.strategy === "transaction" && <PoolPanel />}
        <HoldersPanel />
      </div>
      {userId && <IdentityTools userId={userId} onSwitch={promote.endRound} />}
    </div>
  );
}
