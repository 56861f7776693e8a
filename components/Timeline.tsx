"use client";

import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { providerQuery, timelineQuery, usersQuery } from "./queries";
import { conflictMarks } from "./conflict-marks";
import { SpanWaterfall } from "./SpanWaterfall";
import { TimelineChart, type TimelineMark } from "./TimelineChart";
import { TimelineLegend } from "./TimelineLegend";

const windows = [
  { label: "Fit the last operations", ms: null },
  { label: "Last 10 s", ms: 10_000 },
  { label: "Last 30 s", ms: 30_000 },
  { label: "Last 60 s", ms: 60_000 },
  { label: "Last 5 min", ms: 300_000 },
] as const;

/**
 * The main page's timeline: the last ten minutes of every user's operations, live from the stream, in a
 * chosen window, with a pause. In the "fit" view the newest 409s are numbered on the picture and said under it.
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
  const [windowIndex, setWindowIndex] = useState(0);
  const [paused, setPaused] = useState(false);
  const windowMs = windows[windowIndex]!.ms;
  const lanes = timeline.data?.operations;
  const picked = lanes?.find((lane) => lane.operationId === selected);
  // Marked only where the rows do not move with the clock: in the "fit" view.
  const marks = useMemo(() => (lanes && windowMs === null ? conflictMarks(lanes) : []), [lanes, windowMs]);
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
        lanes={lanes ?? []}
        label="Operations over time"
        clockOffsetMs={timeline.data?.clockOffsetMs ?? 0}
        frozen={paused}
        windowMs={windowMs}
        marks={marks}
        providerCalls={provider.data?.calls}
        userNames={userNames}
        selected={selected}
        onSelect={onSelect}
        empty={<p className="explanation">No operations yet: each switch is drawn here as it runs.</p>}
      />
      {picked && <SpanWaterfall operationId={picked.operationId} answeredAt={picked.answeredAt} />}
      <MarksSaid marks={marks} />
      <TimelineLegend />
    </section>
  );
}

/** The marks on the picture, in words: what each numbered circle is. */
function MarksSaid({ marks }: { marks: TimelineMark[] }) {
  if (marks.length === 0) return null;
  return (
    <ol className="tl-marks" aria-label="Marks on the picture">
      {marks.map((mark) => (
        <li key={mark.label}>
          <span aria-hidden="true">{mark.label}</span> {mark.description}
        </li>
      ))}
    </ol>
  );
}
