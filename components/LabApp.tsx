"use client";

import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type LabPreset, type LabSettings } from "./api";
import { AuditPanel } from "./AuditPanel";
import { ChaosPanel } from "./ChaosPanel";
import { EventsPanel } from "./EventsPanel";
import { IdentityPanel } from "./IdentityPanel";
import { IdentityTools } from "./IdentityTools";
import { LabPanel } from "./LabPanel";
import { PoolPanel } from "./PoolPanel";
import { ProviderPanel } from "./ProviderPanel";
import { instancesQuery, labSettingsQuery, presetsQuery, queryKeys, sessionQuery } from "./queries";
import { ServedByPanel } from "./ServedByPanel";
import { SettingsBanner } from "./SettingsBanner";
import { SignIn } from "./SignIn";
import { Timeline } from "./Timeline";
import { useLabStream } from "./useLabStream";

/** Whether every value the preset sets is the value in force. */
function matches(wanted: unknown, actual: unknown): boolean {
  if (wanted === null || typeof wanted !== "object") return wanted === actual;
  if (actual === null || typeof actual !== "object") return false;
  return Object.entries(wanted).every(([key, value]) => matches(value, (actual as Record<string, unknown>)[key]));
}

const activePreset = (presets: LabPreset[] | undefined, settings: LabSettings | undefined): string =>
  (settings && presets?.find((preset) => matches(preset.settings, settings))?.name) ?? "custom";

/**
 * The page, story first: the user's identities, the timeline and the audit; then the provider and the
 * narrated events; the lab's controls fold away.
 */
export function LabApp() {
  const queryClient = useQueryClient();
  const connected = useLabStream();
  const session = useQuery(sessionQuery());
  const settings = useQuery(labSettingsQuery());
  const presets = useQuery(presetsQuery());
  const instances = useQuery(instancesQuery());
  const [selected, setSelected] = useState<string | null>(null);
  const holdsConnections = settings.data?.strategy === "transaction";
  const signOut = useMutation({
    mutationFn: () => api<void>("/api/session", { method: "DELETE" }),
    onSuccess: () => queryClient.setQueryData(queryKeys.session, null),
  });

  return (
    <main>
      <header className="masthead">
        <div>
          <h1>Lease Lock Lab</h1>
          <p className="tagline">
            Only one request may change a user&apos;s primary identity at a time. Watch what happens when two try.{" "}
            <Link href="/learn">Learn: every question, run in one click</Link>
          </p>
        </div>
        <div className="masthead-side">
          <p className="hint">
            {connected ? "Live" : "Reconnecting…"}
            {instances.data && ` · served by instance ${instances.data.instance}`}
          </p>
          <ServedByPanel />
          {session.data && (
            <button type="button" className="quiet" onClick={() => signOut.mutate()}>
              Sign out
            </button>
          )}
        </div>
      </header>
      <div className="story">
        <section aria-labelledby="identities-heading" className="card identities-card">
          {session.isPending ? (
            <p>Loading…</p>
          ) : session.data ? (
            <IdentityPanel userId={session.data.userId} />
          ) : (
            <SignIn />
          )}
        </section>
        <div className="story-main">
          <Timeline selected={selected} onSelect={setSelected} />
          <AuditPanel selected={selected} />
          {/* Right after the audit; on a phone after the timeline, which follows the verdict within one screen. */}
          <SettingsBanner />
          {/* Under `transaction` each switch holds a pooled connection for its whole run: the gauge is the lesson. */}
          {holdsConnections && <PoolPanel />}
        </div>
        {session.data && <IdentityTools userId={session.data.userId} />}
      </div>
      <div className="evidence">
        <ProviderPanel selected={selected} />
        {session.data && <EventsPanel userId={session.data.userId} selected={selected} />}
      </div>
      <details className="card lab-controls">
        <summary>
          Lab controls — strategy <strong>{settings.data?.strategy ?? "…"}</strong>, preset{" "}
          <strong>{activePreset(presets.data?.presets, settings.data)}</strong>
        </summary>
        <div className="lab-grid">
          <LabPanel />
          {!holdsConnections && <PoolPanel />}
          <ChaosPanel />
        </div>
      </details>
    </main>
  );
}
