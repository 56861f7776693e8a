"use client";

import { useQuery } from "@tanstack/react-query";
import { poolQuery } from "./queries";

/** This instance's pool as slots (busy, idle, free) and a line of counts, from the stream's pool messages. */
export function PoolPanel() {
  const pool = useQuery(poolQuery());
  if (!pool.data) return null;
  const { size, inUse, idle, waiting } = pool.data;
  return (
    <section className="card" aria-labelledby="pool-heading">
      <h2 id="pool-heading">Connection pool (this app instance)</h2>
      <div
        className="pool"
        role="img"
        aria-label={`${inUse} of ${size} connections in use, ${waiting} requests waiting`}
      >
        {Array.from({ length: Math.max(size, inUse + idle) }, (_, index) => (
          <span key={index} className={index < inUse ? "slot busy" : index < inUse + idle ? "slot idle" : "slot"} />
        ))}
      </div>
      {/* Not a live region: it changes with every checkout and return, several times a switch. */}
      <p className={waiting > 0 ? "pool-line waiting" : "pool-line"}>
        {inUse} in use · {idle} idle · <strong>{waiting} waiting</strong> for a connection
      </p>
    </section>
  );
}
