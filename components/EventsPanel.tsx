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
export function EventsPanel({ userId, selected }: { userId: string; selected: string | null }) {
  const events = useQuery(eventsQuery(userId));
  // Oldest first: the story in the order it happened.
  const list = [...(events.data?.events ?? [])].reverse();
  return (
    <section aria-labelledby="events-heading" className="card events">
      <h2 id="events-heading">What happened, in words</h2>
      {list.length === 0 ? (
        <p className="explanation">
          Nothing yet: refusals, take-overs, recoveries, fenced calls and failed releases show up here, oldest first.
        </p>
      ) : (
        // Scrolls when long: focusable, so a keyboard can scroll it.
        <ol tabIndex={0} aria-label="Events, oldest first">
          {list.map((event) => (
            <li
              key={event.id}
              className={`event ${event.kind}${selected && event.operationId === selected ? " selected" : ""}`}
            >
              <strong>{kindLabels[event.kind]}</strong> <small>{new Date(event.at).toLocaleTimeString()}</small>
              <div>{event.message}</div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
