"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { EventsPanel } from "./EventsPanel";
import { LabControls } from "./LabControls";
import { Masthead } from "./Masthead";
import { ProviderPanel } from "./ProviderPanel";
import { sessionQuery } from "./queries";
import { Story } from "./Story";
import { useLabStream } from "./useLabStream";

/**
 * The page, story first: where to start, the user's identities, the timeline and the audit; then the
 * provider and the narrated events; the lab's controls fold away. An operation picked out in one is
 * picked out in all.
 */
export function LabApp() {
  const stream = useLabStream();
  const session = useQuery(sessionQuery());
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <main>
      <Masthead stream={stream} />
      <Story selected={selected} onSelect={setSelected} />
      <div className="evidence">
        <ProviderPanel selected={selected} />
        {session.data && <EventsPanel userId={session.data.userId} selected={selected} />}
      </div>
      <LabControls />
    </main>
  );
}
