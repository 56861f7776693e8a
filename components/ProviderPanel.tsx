"use client";

import { useQuery } from "@tanstack/react-query";
import { identityIdOf } from "@/db/schema";
import { identityId, seedUsers } from "@/db/seed-data";
import type { ProviderCall } from "./api";
import { providerQuery } from "./queries";

/** The demo user each identity belongs to (identities never change hands; accounts at the provider do). */
const ownerOf = new Map(
  seedUsers.flatMap((user) => user.identities.map((identity) => [identityId(identity), user.displayName] as const)),
);

function describeCall(call: ProviderCall): string {
  if (call.outcome === "timeout") return "timed out (no answer)";
  if (call.outcome === "network-error") return "network error";
  if (call.outcome === "applied-late") return `${call.status}, applied but answered late`;
  if (call.outcome === "client-closed") return `${call.status}, done after its caller had gone`;
  if (call.outcome === "deadline-passed") return `${call.status}, not applied: its deadline had passed`;
  if (call.outcome === "fenced") return `${call.status}, fenced: stale token`;
  return String(call.status);
}

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour12: false }) + iso.slice(19, 23);

/** The provider's accounts (with whose they are) and its call log in the order the calls ended. */
export function ProviderPanel({ selected }: { selected: string | null }) {
  const state = useQuery(providerQuery());
  if (!state.data)
    return <section className="card">{state.error ? state.error.message : "Loading the provider…"}</section>;
  const calls = state.data.calls.slice(-40).reverse();
  // The audit's findings link to an operation's newest call.
  const anchored = new Set<string>();
  const anchorFor = (operationId: string | null) => {
    if (!operationId || anchored.has(operationId)) return undefined;
    anchored.add(operationId);
    return `operation-${operationId}`;
  };

  return (
    <section className="card provider" aria-labelledby="provider-heading">
      <h2 id="provider-heading">The identity provider (simulated)</h2>
      <div className="provider-columns">
        <div>
          <h3>Accounts</h3>
          <ul className="accounts" aria-label="Provider accounts">
            {state.data.accounts.map((account) => (
              <li key={account.user_id}>
                <code>{account.user_id}</code> <span className="owner">{ownerOf.get(account.user_id) ?? ""}</span>
                {account.identities.length > 1 && (
                  <ul>
                    {account.identities.slice(1).map((identity) => {
                      const linkedId = identityIdOf(identity.provider, identity.user_id);
                      return (
                        <li key={linkedId}>
                          linked: <code>{linkedId}</code> <span className="owner">{ownerOf.get(linkedId) ?? ""}</span>
                        </li>
                      );
                    })}
                  </ul>
                )}
              </li>
            ))}
          </ul>
        </div>
        <div className="calls-wrap" tabIndex={0} role="region" aria-label="Provider calls">
          <h3>Calls, newest first</h3>
          {calls.length === 0 ? (
            <p>No calls yet.</p>
          ) : (
            <table className="calls">
              <thead>
                <tr>
                  <th scope="col">Ended</th>
                  <th scope="col">Operation</th>
                  <th scope="col">Call</th>
                  <th scope="col">Answer</th>
                  <th scope="col">ms</th>
                </tr>
              </thead>
              <tbody>
                {calls.map((call, index) => (
                  <tr
                    key={`${call.at}-${index}`}
                    id={anchorFor(call.operationId)}
                    className={selected && call.operationId === selected ? "selected" : undefined}
                    data-operation-id={call.operationId ?? undefined}
                  >
                    <td>{clock(call.at)}</td>
                    <td>
                      <code>{call.operationId?.slice(0, 8) ?? "–"}</code>
                    </td>
                    <td>
                      <code>
                        {call.method} {call.path.replace("/api/v2", "")}
                      </code>
                    </td>
                    <td className={call.status >= 200 && call.status < 400 && !call.outcome ? "ok" : "bad"}>
                      {describeCall(call)}
                    </td>
                    <td>{call.durationMs}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      </div>
    </section>
  );
}
