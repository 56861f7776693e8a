"use client";

import { useEffect, useMemo, useRef, useState } from "react";
import { laneLabel, laneLabels } from "@/lib/lab/experiments/run-facts";
import { TimelineChart } from "../TimelineChart";
import { laneAt, leaseHolderAt, momentsOf, snapshotAt, spanOf } from "./replay";
import type { RunRecord } from "./types";

const speeds = [
  { label: "1×", factor: 1 },
  { label: "¼× (slow motion)", factor: 0.25 },
  { label: "1/10×", factor: 0.1 },
] as const;

const seconds = (at: number, from: number): string => `${((at - from) / 1000).toFixed(3)} s`;

/** The explanation as short steps: one sentence a line. */
const sentences = (text: string): string[] => text.split(/(?<=[.!?])\s+(?=[A-Z0-9])/).filter(Boolean);

/**
 * A saved run, replayed: the whole run drawn with the shared timeline (each variant a group, each request
 * named as the run named it, each cited fact a numbered marker), a slider to scrub it, steps from one
 * recorded moment to the next, play in slow motion, and the lease, the provider's accounts and the audit
 * as they were at the moment shown.
 */
export function RunReplay({ run, title }: { run: RunRecord; title: string }) {
  const { from, to } = useMemo(() => spanOf(run), [run]);
  const moments = useMemo(() => momentsOf(run), [run]);
  const labels = useMemo(() => laneLabels(run.history), [run]);
  const [at, setAt] = useState(to);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(0);
  const frame = useRef<number | null>(null);

  useEffect(() => {
    if (!playing) return;
    let last = performance.now();
    const tick = (now: number) => {
      const step = (now - last) * speeds[speed]!.factor;
      last = now;
      setAt((current) => {
        const next = Math.min(to, current + step);
        if (next >= to) setPlaying(false);
        return next;
      });
      frame.current = requestAnimationFrame(tick);
    };
    frame.current = requestAnimationFrame(tick);
    return () => {
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    };
  }, [playing, speed, to]);

  const variantOf = (operationId: string) =>
    run.variants.findIndex((variant) => variant.operationIds.includes(operationId));
  const lanes = run.lanes
    .map((lane) => laneAt(lane, at))
    .filter((lane) => lane !== null)
    .sort(
      (a, b) =>
        variantOf(a.operationId) - variantOf(b.operationId) || Date.parse(a.requestedAt) - Date.parse(b.requestedAt),
    );
  const markerId = (n: number) => `run-${run.id}-marker-${n}`;
  const holder = leaseHolderAt(run.lanes, at);
  const { state, audit } = snapshotAt(run, at);
  const previous = moments.findLast((moment) => moment < at - 0.5);
  const next = moments.find((moment) => moment > at + 0.5);

  return (
    <div className="run-replay">
      <TimelineChart
        label={title}
        lanes={lanes}
        at={at}
        laneCaption={(lane) => {
          const index = variantOf(lane.operationId);
          const variant = run.variants[index];
          const group = variant ? `variant ${index + 1} of ${run.variants.length}, ${variant.label}` : "other";
          return `${group}: ${laneLabel(labels, lane.operationId)}`;
        }}
        // A fact is marked once the moment shown has reached it (at the run's first moment, nothing has happened).
        marks={run.steps
          .filter((step) => at > from && Date.parse(step.at) <= at)
          .map((step) => ({
            label: String(step.n),
            at: Date.parse(step.at),
            operationId: step.operationId,
            id: markerId(step.n),
            description: step.text,
          }))}
      />
      <div className="replay-controls" role="group" aria-label="Replay">
        <button
          type="button"
          onClick={() => previous !== undefined && setAt(previous)}
          disabled={previous === undefined}
        >
          ◀ Previous step
        </button>
        <button
          type="button"
          aria-pressed={playing}
          onClick={() => {
            if (!playing && at >= to) setAt(from);
            setPlaying(!playing);
          }}
        >
          {playing ? "Pause" : "Play"}
        </button>
        <button type="button" onClick={() => next !== undefined && setAt(next)} disabled={next === undefined}>
          Next step ▶
        </button>
        <label>
          Speed{" "}
          <select value={speed} onChange={(event) => setSpeed(Number(event.target.value))}>
            {speeds.map((option, index) => (
              <option key={option.label} value={index}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
        <label className="replay-slider">
          <span>Moment</span>
          <input
            type="range"
            min={from}
            max={to}
            step={1}
            value={at}
            aria-valuetext={seconds(at, from)}
            onChange={(event) => {
              setPlaying(false);
              setAt(Number(event.target.value));
            }}
          />
        </label>
        <span className="replay-at">
          {seconds(at, from)} of {seconds(to, from)}
        </span>
      </div>
      <dl className="replay-state" aria-label="The lab at this moment">
        <dt>Lease row</dt>
        <dd>
          {holder?.lease
            ? `held by ${laneLabel(labels, holder.operationId)}, fence ${holder.lease.fence}, until ${seconds(
                Date.parse(holder.lease.expiresAt),
                from,
              )}`
            : "free"}
        </dd>
        <dt>Provider accounts{state ? ` (as read at ${seconds(Date.parse(state.at), from)})` : ""}</dt>
        <dd>
          {state ? (
            <ul>
              {state.accounts.map((account) => (
                <li key={account.user_id}>
                  {account.user_id}:{" "}
                  {account.identities.map((identity) => `${identity.provider}|${identity.user_id}`).join(", ")}
                </li>
              ))}
              <li>local primary: {state.localPrimaryIdentityId ?? "unknown"}</li>
            </ul>
          ) : (
            "not read yet at this moment"
          )}
        </dd>
        <dt>Audit{audit ? ` (as read at ${seconds(Date.parse(audit.at), from)})` : ""}</dt>
        <dd>
          {audit?.audit
            ? audit.audit.consistent
              ? "consistent"
              : `inconsistent: ${audit.audit.violations.join("; ")}`
            : "not read yet in this variant (the run reads it at the end of each variant)"}
        </dd>
      </dl>
      {run.steps.length > 0 && (
        <>
          <h3>The facts on the picture</h3>
          <ol className="run-steps">
            {run.steps.map((step) => (
              <li key={step.n} value={step.n}>
                <a
                  href={`#${markerId(step.n)}`}
                  onClick={() => {
                    setPlaying(false);
                    setAt(Math.max(at, Date.parse(step.at)));
                  }}
                >
                  {step.text}
                </a>
              </li>
            ))}
          </ol>
        </>
      )}
      <h3>What happened, and why</h3>
      <ol className="explanation">
        {sentences(run.explanation).map((sentence, index) => (
          <li key={index}>{sentence}</li>
        ))}
      </ol>
    </div>
  );
}
