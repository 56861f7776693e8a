"use client";

import { useQuery } from "@tanstack/react-query";
import type { OperationEvent } from "./api";
import { eventsQuery } from "./queries";

const kindLabels: Record<OperationEvent["kind"], string> = {
  "lease-taken-over": "Lease taken over",
  recovered: "Recovered",
  fenced: "Fenced call refused",
  "lease-lost": "Lease lost",
  "release-failed": "Release failed",
  refused: "Refused",
};

/** The lab's narration for one user: what the safeguards did, in words, as it happens. */
export function EventsPanel({ userId }: { userId: string }) {
  const events = useQuery(eventsQuery(userId));
  const list = events.data?.events ?? [];
  return (
    <section aria-labelledby="events-heading" className="events">
      <h3 id="events-heading">What the lease did</h3>
      {list.length === 0 ? (
        <p className="explanation">
          Nothing unusual yet: take-overs, recoveries, fenced calls and failed releases show up here.
        </p>
      ) : (
        <ol aria-live="polite">
          {list.map((event, index) => (
            <li key={`${event.at}-${index}`} className={`event ${event.kind}`}>
              <strong>{kindLabels[event.kind]}</strong> <small>{new Date(event.at).toLocaleTimeString()}</small>
              <div>{event.message}</div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
