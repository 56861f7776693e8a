import { Fragment } from "react";
import type { ProviderCall } from "./api";

function describeCall(call: ProviderCall): string {
  if (call.outcome === "timeout") return "timed out (no answer)";
  if (call.outcome === "network-error") return "network error";
  if (call.outcome === "applied-late") return `${call.status}, applied but answered late`;
  if (call.outcome === "client-closed") return `${call.status}, done after its caller had gone`;
  if (call.outcome === "deadline-passed") return `${call.status}, not applied: its deadline had passed`;
  if (call.outcome === "fenced") return `${call.status}, fenced: stale token`;
  return String(call.status);
}

/** A path with a break opportunity after each "/" and "|": it wraps at its parts, never mid-word. */
const breakable = (path: string) =>
  path.split(/(?<=[/|])/).map((part, index) => (
    <Fragment key={index}>
      {index > 0 && <wbr />}
      {part}
    </Fragment>
  ));

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour12: false }) + iso.slice(19, 23);

/**
 * The provider's last 40 calls, newest first, each with the operation that sent it (under the call, so
 * the table fits a phone); the audit's findings link to an operation's newest call.
 */
export function ProviderCalls({ calls, selected }: { calls: ProviderCall[]; selected: string | null }) {
  const newestFirst = calls.slice(-40).reverse();
  const anchored = new Set<string>();
  const anchorFor = (operationId: string | null) => {
    if (!operationId || anchored.has(operationId)) return undefined;
    anchored.add(operationId);
    return `operation-${operationId}`;
  };
  return (
    <div className="calls-wrap" tabIndex={0} role="region" aria-label="Provider calls">
      <h3>Calls, newest first</h3>
      {newestFirst.length === 0 ? (
        <p>No calls yet.</p>
      ) : (
        <table className="calls">
          <thead>
            <tr>
              <th scope="col">Ended</th>
              <th scope="col">Call</th>
              <th scope="col">Answer</th>
              <th scope="col">ms</th>
            </tr>
          </thead>
          <tbody>
            {newestFirst.map((call) => (
              <tr
                key={call.id}
                id={anchorFor(call.operationId)}
                className={selected && call.operationId === selected ? "selected" : undefined}
                data-operation-id={call.operationId ?? undefined}
              >
                <td>{clock(call.at)}</td>
                <td>
                  <code>
                    {call.method} {breakable(call.path.replace("/api/v2", ""))}
                  </code>
                  <small className="call-operation">
                    {call.operationId ? `operation ${call.operationId.slice(0, 8)}` : "no operation id"}
                  </small>
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
  );
}
