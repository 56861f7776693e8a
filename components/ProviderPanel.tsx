"use client";

import { useQuery } from "@tanstack/react-query";
import { identityIdOf } from "@/db/schema";
import type { ProviderCall } from "./api";
import { providerQuery } from "./queries";

/** A stable color per operation, so the calls of one operation read as a group. */
function operationHue(operationId: string): number {
  let hash = 0;
  for (const char of operationId) hash = (hash * 31 + char.charCodeAt(0)) % 360;
  return hash;
}

/** The log grouped by operation, the operation with the latest call first. */
function groupByOperation(calls: ProviderCall[]): { operationId: string | null; calls: ProviderCall[] }[] {
  const groups = new Map<string, ProviderCall[]>();
  for (const call of calls) {
    const key = call.operationId ?? "none";
    groups.set(key, [...(groups.get(key) ?? []), call]);
  }
  return [...groups.entries()]
    .map(([key, grouped]) => ({ operationId: key === "none" ? null : key, calls: grouped }))
    .sort((a, b) => Date.parse(b.calls.at(-1)!.at) - Date.parse(a.calls.at(-1)!.at));
}

function describeCall(call: ProviderCall): string {
  if (call.outcome === "timeout") return "timed out (no answer)";
  if (call.outcome === "network-error") return "network error";
  if (call.outcome === "applied-late") return `${call.status}, applied but answered late`;
  if (call.outcome === "client-closed") return "not applied: the caller had gone";
  return String(call.status);
}

export function ProviderPanel() {
  const state = useQuery(providerQuery());
  if (!state.data)
    return <section className="card">{state.error ? state.error.message : "Loading the provider…"}</section>;
  const groups = groupByOperation(state.data.calls).slice(0, 15);

  return (
    <section className="card provider" aria-labelledby="provider-heading">
      <h2 id="provider-heading">The identity provider (simulated)</h2>
      <div className="columns">
        <div>
          <h3>Accounts</h3>
          <ul className="accounts" aria-label="Provider accounts">
            {state.data.accounts.map((account) => (
              <li key={account.user_id}>
                <code>{account.user_id}</code>
                {account.identities.length > 1 && (
                  <ul>
                    {account.identities.slice(1).map((identity) => {
                      const identityId = identityIdOf(identity.provider, identity.user_id);
                      return (
                        <li key={identityId}>
                          linked: <code>{identityId}</code>
                        </li>
                      );
                    })}
                  </ul>
                )}
              </li>
            ))}
          </ul>
        </div>
        <div>
          <h3>Calls, grouped by operation (newest first)</h3>
          {groups.length === 0 && <p>No calls yet.</p>}
          <table className="calls">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Call</th>
                <th scope="col">Answer</th>
                <th scope="col">ms</th>
              </tr>
            </thead>
            {groups.map((group) => {
              const color = group.operationId ? `hsl(${operationHue(group.operationId)} 60% 45%)` : "var(--line)";
              return (
                <tbody
                  key={group.operationId ?? "none"}
                  id={group.operationId ? `operation-${group.operationId}` : undefined}
                  style={{ borderLeft: `5px solid ${color}` }}
                >
                  <tr className="group-head">
                    <th scope="rowgroup" colSpan={4} style={{ color }}>
                      {group.operationId ? `operation ${group.operationId.slice(0, 8)}` : "calls without an operation"}
                    </th>
                  </tr>
                  {group.calls.map((call, index) => (
                    <tr key={`${call.at}-${index}`}>
                      <td>{new Date(call.at).toLocaleTimeString()}</td>
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
              );
            })}
          </table>
        </div>
      </div>
    </section>
  );
}
