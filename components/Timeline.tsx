"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import type { Lane, LaneLease, Phase, ProviderCall } from "./api";
import { providerQuery, timelineQuery, usersQuery } from "./queries";
import { useNow } from "./useNow";

const windows = [
  { label: "Fit the last operations", ms: null },
  { label: "Last 10 s", ms: 10_000 },
  { label: "Last 30 s", ms: 30_000 },
  { label: "Last 60 s", ms: 60_000 },
  { label: "Last 5 min", ms: 300_000 },
] as const;

const laneHeight = 44;
const barTop = 18;
const barHeight = 18;
const groupHeight = 24;
const axisHeight = 22;
/** In "fit" mode: the operations requested within this long of the latest one. */
const fitSpanMs = 30_000;

const failed = (phase: Phase): boolean =>
  phase.outcome !== null &&
  !/^(won|took-over|2\d\d|saved|released|kept|renewed|resumed|connected|locked)$/.test(phase.outcome);

const ms = (iso: string): number => Date.parse(iso);

/** When a lease stopped holding: its release or its expiry, whichever came first (held: its expiry). */
export function leaseEnd(lease: LaneLease): number {
  // Lanes recorded before leases had `releasedAt` lack it: never released, as far as they say.
  const releasedAt = lease.releasedAt ?? null;
  return releasedAt === null ? ms(lease.expiresAt) : Math.min(ms(releasedAt), ms(lease.expiresAt));
}

const seconds = (at: number, origin: number): string => `${((at - origin) / 1000).toFixed(3)} s`;

export function answerWords(lane: Lane): string {
  if (lane.status === null) return "running";
  if (lane.status === 200) return "200";
  const problem = lane.problemType?.split("/").at(-1);
  return `${lane.status}${problem ? ` ${problem}` : ""}`;
}

/** The provider phase a logged call belongs to, by its method (a switch only unlinks and links). */
const phaseOfCall: Record<string, string> = { DELETE: "unlink", POST: "link" };

/**
 * The provider phases whose call the provider applied after the caller gave up (the call log's
 * `applied-late`), as "operationId phase": the bar itself only knows that it timed out.
 */
export function appliedLate(calls: ProviderCall[]): Set<string> {
  return new Set(
    calls
      .filter((call) => call.outcome === "applied-late" && phaseOfCall[call.method])
      .map((call) => `${call.operationId} ${phaseOfCall[call.method]}`),
  );
}

/** Pairs of provider phases of different operations on one account that overlap in time: the collision. */
export function collisions(lanes: Lane[], now: number): Map<Phase, string> {
  const calls = lanes.flatMap((lane) =>
    lane.phases
      .filter((phase) => phase.accounts && phase.accounts.length > 0)
      .map((phase) => ({ lane, phase, from: ms(phase.startedAt), to: phase.endedAt ? ms(phase.endedAt) : now })),
  );
  const found = new Map<Phase, string>();
  for (const a of calls) {
    for (const b of calls) {
      if (a.lane === b.lane || a.from >= b.to || b.from >= a.to) continue;
      const account = a.phase.accounts!.find((each) => b.phase.accounts!.includes(each));
      if (account)
        found.set(a.phase, `collides with operation ${b.lane.operationId.slice(0, 8)}'s ${b.phase.name} on ${account}`);
    }
  }
  return found;
}

function useWidth<T extends Element>(): [React.RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(800);
  useEffect(() => {
    if (!ref.current) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry!.contentRect.width)));
    observer.observe(ref.current);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/**
 * A recorded run instead of the live lab (the Learn view's replay): its lanes as they were at `at`, on
 * the fixed span `from`–`to`, grouped and named in the run's words, with its numbered facts as markers.
 */
export interface TimelineReplay {
  title: string;
  lanes: Lane[];
  calls: ProviderCall[];
  at: number;
  from: number;
  to: number;
  groupOf: (lane: Lane) => string;
  nameOf: (lane: Lane) => string;
  markers: { n: number; at: number; operationId: string; id: string; text: string }[];
}

/**
 * Every operation as a swimlane, time running left to right: its phases as bars, its lease as a band
 * from its acquisition to its release or expiry (whichever came first), collisions at the provider
 * outlined. Live from the stream; the clock only ticks while an operation is running (and not while
 * paused). With `replay`, a recorded run instead, at the moment it names.
 */
export function Timeline({
  selected,
  onSelect,
  replay,
}: {
  selected: string | null;
  onSelect: (operationId: string | null) => void;
  replay?: TimelineReplay;
}) {
  const timeline = useQuery({ ...timelineQuery(), enabled: !replay });
  const users = useQuery(usersQuery());
  const provider = useQuery({ ...providerQuery(), enabled: !replay });
  const [windowIndex, setWindowIndex] = useState(0);
  const [paused, setPaused] = useState(false);
  const [focused, setFocused] = useState<{ lane: Lane; phase: Phase } | null>(null);
  const [frozenAt, setFrozenAt] = useState(0);
  const [ref, width] = useWidth<HTMLDivElement>();
  const lanes = replay?.lanes ?? timeline.data?.operations ?? [];
  const running = !replay && lanes.some((lane) => lane.answeredAt === null);
  const browserNow = useNow(running && !paused, 100);
  const now = replay ? replay.at : (paused ? frozenAt : browserNow) + (timeline.data?.clockOffsetMs ?? 0);

  const windowMs = windows[windowIndex]!.ms;
  const latest = Math.max(0, ...lanes.map((lane) => ms(lane.requestedAt)));
  const shown = lanes.filter((lane) =>
    replay
      ? true
      : windowMs === null
        ? ms(lane.requestedAt) >= latest - fitSpanMs
        : ms(lane.answeredAt ?? new Date(now).toISOString()) >= now - windowMs,
  );
  const ends = shown.flatMap((lane) => [
    lane.answeredAt ? ms(lane.answeredAt) : now,
    ...(lane.lease ? [leaseEnd(lane.lease)] : []),
  ]);
  const from = replay
    ? replay.from
    : windowMs === null
      ? Math.min(...shown.map((lane) => ms(lane.requestedAt)))
      : now - windowMs;
  const to = replay ? replay.to : windowMs === null ? Math.max(...ends) : now;
  const span = Math.max(1, to - from);
  const pad = windowMs === null ? span * 0.03 : 0;
  const x = (at: number) => ((at - from + pad) / (span + 2 * pad)) * width;

  const byUser = new Map<string, Lane[]>();
  const groupOf = replay?.groupOf ?? ((lane: Lane) => lane.userId);
  for (const lane of shown) byUser.set(groupOf(lane), [...(byUser.get(groupOf(lane)) ?? []), lane]);
  const userName = (userId: string) =>
    replay ? userId : (users.data?.users.find((user) => user.id === userId)?.displayName ?? userId);
  const collided = collisions(shown, now);
  const late = appliedLate(replay?.calls ?? provider.data?.calls ?? []);
  const laneTop = new Map<string, number>();

  let y = axisHeight;
  const rows: React.ReactNode[] = [];
  for (const [userId, userLanes] of byUser) {
    rows.push(
      <text key={`user-${userId}`} x={4} y={y + 16} className="tl-user">
        {userName(userId)}
      </text>,
    );
    y += groupHeight;
    for (const lane of userLanes) {
      laneTop.set(lane.operationId, y);
      rows.push(
        <LaneRow
          key={lane.operationId}
          lane={lane}
          top={y}
          x={x}
          now={now}
          origin={from}
          selected={selected === lane.operationId}
          collided={collided}
          late={late}
          name={replay?.nameOf(lane)}
          onSelect={() => onSelect(selected === lane.operationId ? null : lane.operationId)}
          onFocusPhase={(phase) => setFocused({ lane, phase })}
        />,
      );
      y += laneHeight;
    }
  }
  const ticks = span > 0 ? tickMarks(from, to, width) : [];

  return (
    <section className="card timeline" aria-labelledby="timeline-heading">
      <div className="timeline-head">
        <h2 id="timeline-heading">{replay?.title ?? "Timeline: every operation, as it happens"}</h2>
        {/* A replay has its own controls: the live window and pause do not apply to it. */}
        {!replay && (
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
            <button
              type="button"
              className="quiet"
              aria-pressed={paused}
              onClick={() => {
                setFrozenAt(Date.now());
                setPaused(!paused);
              }}
            >
              {paused ? "Resume" : "Pause"}
            </button>
          </div>
        )}
      </div>
      <div ref={ref} className="timeline-plot">
        {shown.length === 0 ? (
          <p className="explanation">
            {replay
              ? "No operation had started yet at this moment."
              : "No operations yet. Click Make primary (twice, quickly) to see them collide."}
          </p>
        ) : (
          <svg width={width} height={y + 4} role="group" aria-label="Operations over time, one lane each">
            {ticks.map((tick) => (
              <g key={tick} aria-hidden="true">
                <line x1={x(tick)} x2={x(tick)} y1={axisHeight - 4} y2={y} className="tl-grid" />
                <text x={x(tick) + 2} y={12} className="tl-tick">
                  {seconds(tick, from)}
                </text>
              </g>
            ))}
            {rows}
            {replay?.markers
              .filter((marker) => marker.at <= now && laneTop.has(marker.operationId))
              .map((marker) => (
                <g
                  key={marker.n}
                  id={marker.id}
                  className="tl-marker"
                  role="img"
                  aria-label={`${marker.n}: ${marker.text}`}
                >
                  <circle cx={x(marker.at)} cy={laneTop.get(marker.operationId)! + barTop + barHeight / 2} r={9} />
                  <text
                    x={x(marker.at)}
                    y={laneTop.get(marker.operationId)! + barTop + barHeight / 2 + 4}
                    textAnchor="middle"
                  >
                    {marker.n}
                  </text>
                </g>
              ))}
          </svg>
        )}
      </div>
      <p className="timeline-detail">
        {focused
          ? describePhase(
              focused.lane,
              focused.phase,
              from,
              collided.get(focused.phase),
              late.has(`${focused.lane.operationId} ${focused.phase.name}`),
            )
          : "Hover or focus a bar for its exact times; click it to pick out its operation's calls, findings and events."}
      </p>
      <Legend />
    </section>
  );
}

function LaneRow({
  lane,
  top,
  x,
  now,
  origin,
  selected,
  collided,
  late,
  name,
  onSelect,
  onFocusPhase,
}: {
  lane: Lane;
  top: number;
  x: (at: number) => number;
  now: number;
  origin: number;
  selected: boolean;
  collided: Map<Phase, string>;
  late: Set<string>;
  name?: string;
  onSelect: () => void;
  onFocusPhase: (phase: Phase) => void;
}) {
  const end = lane.answeredAt ? ms(lane.answeredAt) : now;
  const lease = lane.lease;
  const leaseUntil = lease ? leaseEnd(lease) : 0;
  // Released before its expiry (a release after it is too late to matter: it had expired first).
  const released = lease !== null && leaseUntil < ms(lease.expiresAt);
  const expiredWhileRunning = lease !== null && !released && ms(lease.expiresAt) < end && lane.status !== 409;
  // A lease kept past the answer, for a call whose outcome is unknown: drawn to its expiry, saying why.
  const kept = lane.phases.find((phase) => phase.name === "release" && phase.outcome === "kept");
  const label =
    `${name ?? lane.operationId.slice(0, 8)} → ${lane.toIdentityId ?? "settle leftovers"} · ${lane.strategy} · ` +
    `${answerWords(lane)}${kept ? ` · lease ${kept.detail ?? "kept"}` : ""} · instance ${lane.instance}`;
  return (
    <g data-operation-id={lane.operationId} className={selected ? "tl-lane selected" : "tl-lane"} onClick={onSelect}>
      <rect x={0} y={top} width="100%" height={laneHeight - 2} className="tl-lane-bg" />
      <text x={4} y={top + 13} className="tl-label">
        {label}
      </text>
      <line
        x1={x(ms(lane.requestedAt))}
        x2={x(end)}
        y1={top + barTop + barHeight / 2}
        y2={top + barTop + barHeight / 2}
        className="tl-request"
      />
      {lease && (
        <g aria-hidden="true">
          <rect
            x={x(ms(lease.acquiredAt))}
            y={top + barTop - 3}
            width={Math.max(1, x(leaseUntil) - x(ms(lease.acquiredAt)))}
            height={barHeight + 6}
            className="tl-lease"
            data-lease-fence={lease.fence}
            data-lease-from={lease.acquiredAt}
            data-lease-until={new Date(leaseUntil).toISOString()}
            data-lease-end={released ? "released" : kept ? "kept" : "expiry"}
          />
          {released ? (
            // The TTL it would have run to: only a faint tick, the lease no longer holds.
            <line
              x1={x(ms(lease.expiresAt))}
              x2={x(ms(lease.expiresAt))}
              y1={top + barTop}
              y2={top + barTop + barHeight}
              className="tl-expiry faint"
            />
          ) : (
            <line
              x1={x(leaseUntil)}
              x2={x(leaseUntil)}
              y1={top + barTop - 5}
              y2={top + barTop + barHeight + 5}
              className={expiredWhileRunning ? "tl-expiry expired" : "tl-expiry"}
            />
          )}
        </g>
      )}
      {lane.phases.map((phase, index) => {
        const start = x(ms(phase.startedAt));
        const stop = x(phase.endedAt ? ms(phase.endedAt) : now);
        const collision = collided.get(phase);
        const landedLate = late.has(`${lane.operationId} ${phase.name}`);
        const classes = ["tl-phase", `tl-${phase.name}`];
        if (failed(phase)) classes.push("failed");
        if (landedLate) classes.push("applied-late");
        if (!phase.endedAt) classes.push("running");
        if (collision) classes.push("collision");
        return (
          <rect
            key={index}
            x={start}
            y={top + barTop}
            width={Math.max(3, stop - start)}
            height={barHeight}
            className={classes.join(" ")}
            tabIndex={0}
            role="button"
            aria-label={describePhase(lane, phase, origin, collision, landedLate)}
            onFocus={() => onFocusPhase(phase)}
            onMouseEnter={() => onFocusPhase(phase)}
            onKeyDown={(event) => {
              if (event.key === "Enter" || event.key === " ") {
                event.preventDefault();
                onSelect();
              }
            }}
          />
        );
      })}
    </g>
  );
}

function describePhase(lane: Lane, phase: Phase, origin: number, collision?: string, landedLate = false): string {
  const start = seconds(ms(phase.startedAt), origin);
  const end = phase.endedAt ? seconds(ms(phase.endedAt), origin) : "still running";
  const took = phase.endedAt ? ` (${ms(phase.endedAt) - ms(phase.startedAt)} ms)` : "";
  const what = [phase.outcome, phase.detail].filter(Boolean).join(": ");
  return (
    `Operation ${lane.operationId.slice(0, 8)}, ${phase.name} from ${start} to ${end}${took}` +
    `${what ? `, ${what}` : ""}${collision ? `. Collision: ${collision}` : ""}` +
    `${landedLate ? ". Applied late: the provider carried it out after the caller gave up" : ""}`
  );
}

/** Round-numbered ticks, about one per 120 px. */
function tickMarks(from: number, to: number, width: number): number[] {
  const wanted = Math.max(2, Math.floor(width / 120));
  const raw = (to - from) / wanted;
  const step =
    [10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000].find((each) => each >= raw) ?? 60_000;
  const ticks: number[] = [];
  for (let tick = from; tick <= to; tick += step) ticks.push(tick);
  return ticks;
}

const legend = [
  ["waiting", "waiting (pool, lock)"],
  ["acquire", "acquire"],
  ["unlink", "unlink"],
  ["link", "link"],
  ["save", "save"],
  ["renew", "renew"],
  ["release", "release"],
  ["paused", "paused (lab fault)"],
  ["recover", "recover"],
  ["crashed", "crashed (lab fault)"],
] as const;

function Legend() {
  return (
    <ul className="tl-legend" aria-label="Legend">
      {legend.map(([name, words]) => (
        <li key={name}>
          <span className={`swatch tl-${name}`} aria-hidden="true" /> {words}
        </li>
      ))}
      <li>
        <span className="swatch lease" aria-hidden="true" /> lease, from acquisition to release or expiry (after a
        release, a faint tick marks the expiry it no longer needed; a lease kept for an unknown outcome runs to its
        expiry and says why)
      </li>
      <li>
        <span className="swatch collision" aria-hidden="true" /> collision at the provider
      </li>
      <li>
        <span className="swatch failed" aria-hidden="true" /> refused / failed
      </li>
      <li>
        <span className="swatch applied-late" aria-hidden="true" /> applied late at the provider
      </li>
    </ul>
  );
}
