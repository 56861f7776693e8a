"use client";

import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "./api";
import { AuditPanel } from "./AuditPanel";
import { ChaosPanel } from "./ChaosPanel";
import { IdentityPanel } from "./IdentityPanel";
import { LabPanel } from "./LabPanel";
import { PoolPanel } from "./PoolPanel";
import { ProviderPanel } from "./ProviderPanel";
import { queryKeys, sessionQuery } from "./queries";
import { SignIn } from "./SignIn";

export function LabApp() {
  const queryClient = useQueryClient();
  const session = useQuery(sessionQuery());
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
        {session.data && (
          <button type="button" className="quiet" onClick={() => signOut.mutate()}>
            Sign out
          </button>
        )}
      </header>
      <div className="columns">
        <section aria-labelledby="identities-heading" className="card">
          {session.isPending ? (
            <p>Loading…</p>
          ) : session.data ? (
            <IdentityPanel userId={session.data.userId} />
          ) : (
            <SignIn />
          )}
        </section>
        <aside className="stack">
          <AuditPanel />
          <LabPanel />
          <PoolPanel />
          <ChaosPanel />
        </aside>
      </div>
      <ProviderPanel />
    </main>
  );
}
