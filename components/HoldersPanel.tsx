"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { holdersQuery, queryKeys } from "./queries";

/** A time of day from an ISO stamp, to the millisecond (the database's clock, as the stamp says). */
const clockTime = (iso: string) => iso.slice(11, 23);

/**
 * Who holds what: the users whose lease was held when the database was last asked, with each lease's fence and
 * expiry, and the database's time of that read. Read again on every lease message of the stream, and when the
 * soonest lease shown runs out (an expiry clears nothing, so no message says it).
 */
export function HoldersPanel() {
  const holders = useQuery(holdersQuery());
  const queryClient = useQueryClient();
  const soonestMs = holders.data?.holders.reduce((soonest, holder) => Math.min(soonest, holder.remainingMs), Infinity);
  useEffect(() => {
    if (soonestMs === undefined || soonestMs === Infinity) return;
    const timer = setTimeout(
      () => void queryClient.invalidateQueries({ queryKey: queryKeys.holders }),
      Math.max(0, soonestMs) + 50,
    );
    return () => clearTimeout(timer);
  }, [soonestMs, holders.dataUpdatedAt, queryClient]);

  return (
    <section className="card holders" aria-labelledby="holders-heading">
      <h2 id="holders-heading">Who holds what</h2>
      {!holders.data ? (
        <p>{holders.error ? holders.error.message : "Reading the leases…"}</p>
      ) : (
        <>
          {holders.data.holders.length === 0 ? (
            <p>Nobody holds a lease.</p>
          ) : (
            <table className="calls">
              <caption className="visually-hidden">Current lease holders of the users table</caption>
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Fence</th>
                  <th scope="col">Taken at</th>
                  <th scope="col">Expires at</th>
                </tr>
              </thead>
              <tbody>
                {holders.data.holders.map((holder) => (
                  <tr key={holder.userId}>
                    <th scope="row">{holder.userId}</th>
                    <td>{holder.fence}</td>
                    <td>{holder.lockedAt ? clockTime(holder.lockedAt) : "unknown"}</td>
                    <td>{clockTime(holder.expiresAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {holders.data.more && <p className="hint">More hold a lease than are listed here.</p>}
          <p className="hint">Read at {clockTime(holders.data.readAt)} by the database&apos;s clock.</p>
        </>
      )}
    </section>
  );
}
