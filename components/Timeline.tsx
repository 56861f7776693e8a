"use client";

import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import type { Strategy } from "./api";
import { labSettingsQuery, providerQuery, timelineQuery, usersQuery } from "./queries";
import { TimelineChart } from "./TimelineChart";
import { TimelineLegend } from "./TimelineLegend";

const windows = [
  { label: "Fit the last operations", ms: null },
  { label: "Last 10 s", ms: 10_000 },
  { label: "Last 30 s", ms: 30_000 },
  { label: "Last 60 s", ms: 60_000 },
  { label: "Last 5 min", ms: 300_000 },
] as const;

/** What to click to see a collision, under the strategy in force (or why there is none to see). */
export function collisionHint(strategy: Strategy | undefined): string {
  switch (strategy) {
    case "lease":
      return (
        "Under lease nothing collides, by design: double-click Make primary and the second request is " +
        "refused (409) while the first holds the lease."
      );
    case "none":
      return (
        "To corrupt the provider, click Make primary on two different identities, one right after the " +
        "other. A double click on one identity collides but does no harm: the second unlink finds nothing (404)."
      );
    case "optimistic":
      return (
        "Click Make primary on two different identities, one right after the other: both change the " +
        "provider, and the loser learns it only at the save (409 stale-write)."
      );
    case undefined:
      return "Click Make primary to see an operation drawn here.";
    default:
      return (
        `Under ${strategy} a second request waits for the first: double-click Make primary and watch ` +
        "the waiting phase."
      );
  }
}

/**
 * The main page's timeline: the last ten minutes of every user's operations, live from the stream, in a
 * chosen window, with a pause.
 */
export function Timeline({
  selected,
  onSelect,
}: {
  selected: string | null;
  onSelect: (operationId: string | null) => void;
}) {
  const timeline = useQuery(timelineQuery());
  const users = useQuery(usersQuery());
  const provider = useQuery(providerQuery());
  const settings = useQuery(labSettingsQuery());
  const [windowIndex, setWindowIndex] = useState(0);
  const [paused, setPaused] = useState(false);
  const userNames = useMemo(
    () => Object.fromEntries((users.data?.users ?? []).map((user) => [user.id, user.displayName])),
    [users.data],
  );

  return (
    <section className="card timeline" aria-labelledby="timeline-heading">
      <div className="timeline-head">
        <h2 id="timeline-heading">Timeline of every operation</h2>
        <div className="timeline-controls">
          <label>
            <span className="visually-hidden">Time window</span>
            <select value={windowIndex} onChange={(event) => setWindowIndex(Number(event.target.value))}>
              {windows.map((option, index) => (
                <option key={option.label} value={index}>
                  {option.label}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="quiet" aria-pressed={paused} onClick={() => setPaused(!paused)}>
            {paused ? "Resume" : "Pause"}
          </button>
        </div>
      </div>
      <TimelineChart
        lanes={timeline.data?.operations ?? []}
        label="Operations over time"
        clockOffsetMs={timeline.data?.clockOffsetMs ?? 0}
        frozen={paused}
        windowMs={windows[windowIndex]!.ms}
        providerCalls={provider.data?.calls}
        userNames={userNames}
        selected={selected}
        onSelect={onSelect}
        empty={<p className="explanation">No operations yet. {collisionHint(settings.data?.strategy)}</p>}
      />
      <TimelineLegend />
    </section>
  );
}
