"use client";

import { useQuery } from "@tanstack/react-query";
import { api, queryKeys, type ProviderState } from "./api";

/** A stable color per operation, so the calls of one operation read as a group. */
function operationHue(operationId: string): number {
  let hash = 0;
  for (const char of operationId) hash = (hash * 31 + char.charCodeAt(0)) % 360;
  return hash;
}

export function ProviderPanel() {
  const state = useQuery({ queryKey: queryKeys.provider, queryFn: () => api<ProviderState>("/api/lab/provider"), refetchInterval: 1000 });
  if (!state.data) return <section className="card">{state.error ? state.error.message : "Loading the provider…"}</section>;
  const calls = state.data.calls.slice(-40).reverse();

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
                    {account.identities.slice(1).map((identity) => (
                      <li key={`${identity.provider}|${identity.user_id}`}>
                        linked: <code>{`${identity.provider}|${identity.user_id}`}</code>
                      </li>
                    ))}
                  </ul>
                )}
              </li>
            ))}
          </ul>
        </div>
        <div>
          <h3>Call log (newest first)</h3>
          <table className="calls">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Call</th>
                <th scope="col">Status</th>
                <th scope="col">ms</th>
                <th scope="col">Operation</th>
              </tr>
            </thead>
            <tbody>
              {calls.map((call, index) => (
                <tr key={`${call.at}-${index}`} style={call.operationId ? { borderLeft: `4px solid hsl(${operationHue(call.operationId)} 60% 50%)` } : undefined}>
                  <td>{new Date(call.at).toLocaleTimeString()}</td>
                  <td>
                    <code>
                      {call.method} {call.path}
                    </code>
                  </td>
                  <td className={call.status < 400 ? "ok" : "bad"}>{call.status}</td>
                  <td>{call.durationMs}</td>
                  <td>
                    <code>{call.operationId?.slice(0, 8) ?? "—"}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </section>
  );
}
