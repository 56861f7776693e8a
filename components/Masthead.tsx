"use client";

import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "./api";
import { instancesQuery, queryKeys, sessionQuery } from "./queries";
import { replaceRead } from "./replace-read";
import { ServedByPanel } from "./ServedByPanel";
import type { StreamState } from "./useLabStream";

const streamStates: Record<StreamState, string> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting…",
};

/** The page's title and lesson in one line, whether the stream is live, which instance served it, sign-out. */
export function Masthead({ stream }: { stream: StreamState }) {
  const queryClient = useQueryClient();
  const session = useQuery(sessionQuery());
  const instances = useQuery(instancesQuery());
  const signOut = useMutation({
    mutationFn: () => api<void>("/api/session", { method: "DELETE" }),
    // A read of the session still on its way (a window's refocus starts one) would sign the page in again.
    onSuccess: () => replaceRead(queryClient, queryKeys.session, null),
  });
  return (
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
          {streamStates[stream]}
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
  );
}
