"use client";

import { useSyncExternalStore } from "react";
import { onServed, servedOnServer, servedRequests } from "./served-by";

/** Behind the balancer: the page's last requests and the instance that served each (the balancer's word). */
export function ServedByPanel() {
  const served = useSyncExternalStore(onServed, servedRequests, servedOnServer);
  if (served.length === 0) return null;
  return (
    <details className="served-by">
      <summary>Through the balancer: last request served by instance {served[0]!.instance}</summary>
      <ol aria-label="The page's last requests, newest first, and the instance that served each">
        {served.map((request) => (
          <li key={`${request.at}-${request.method}-${request.path}`}>
            {request.method} {request.path}: instance {request.instance}
          </li>
        ))}
      </ol>
    </details>
  );
}
